// toml++'s implementation, compiled here once (MESHNODE_LEAN; otherwise
// Debian's shared library holds it).
#if MESHNODE_TOML_IMPLEMENTATION
#define TOML_IMPLEMENTATION
#endif
#include "common/toml.h"

#include <utility>

namespace mesh {
namespace {

enum class Lexer { normal, comment, basic, literal, multi_basic, multi_literal };

bool starts(std::string_view text, std::size_t at, std::string_view what) {
  return text.substr(at, what.size()) == what;
}

}  // namespace

TomlPosition find_bare_non_ascii(std::string_view text) {
  Lexer state = Lexer::normal;
  std::size_t line = 1, line_start = 0;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (c == '\n') {
      ++line;
      line_start = i + 1;
      if (state == Lexer::comment || state == Lexer::basic || state == Lexer::literal) {
        state = Lexer::normal;
      }
      continue;
    }
    switch (state) {
      case Lexer::normal:
        if (static_cast<unsigned char>(c) >= 0x80) return {line, i - line_start + 1};
        if (c == '#') state = Lexer::comment;
        if (c == '"') state = starts(text, i, "\"\"\"") ? Lexer::multi_basic : Lexer::basic;
        if (c == '\'') state = starts(text, i, "'''") ? Lexer::multi_literal : Lexer::literal;
        if (state == Lexer::multi_basic || state == Lexer::multi_literal) i += 2;
        break;
      case Lexer::comment:
        break;
      case Lexer::basic:
        if (c == '\\' && i + 1 < text.size() && text[i + 1] != '\n') ++i;  // an escape
        else if (c == '"') state = Lexer::normal;
        break;
      case Lexer::literal:
        if (c == '\'') state = Lexer::normal;
        break;
      case Lexer::multi_basic:
      case Lexer::multi_literal: {
        const char quote = state == Lexer::multi_basic ? '"' : '\'';
        if (state == Lexer::multi_basic && c == '\\' && i + 1 < text.size() && text[i + 1] != '\n') {
          ++i;
        } else if (c == quote && starts(text, i, std::string(3, quote))) {
          i += 2;
          // Up to two more quotes belong to the string ("""a""""" is a"").
          for (int extra = 0; extra < 2 && i + 1 < text.size() && text[i + 1] == quote; ++extra) ++i;
          state = Lexer::normal;
        }
        break;
      }
    }
  }
  return {};
}

toml::table parse_toml(std::string_view text, std::string source) {
  const TomlPosition bare = find_bare_non_ascii(text);
  if (bare.line != 0) {
    const toml::source_position position{static_cast<toml::source_index>(bare.line),
                                         static_cast<toml::source_index>(bare.column)};
    throw toml::parse_error("a non-ASCII character outside a string or comment", position,
                            std::make_shared<const std::string>(source));
  }
  return toml::parse(text, std::move(source));
}

}  // namespace mesh

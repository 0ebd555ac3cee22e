// common/toml.h: the bytes TOML allows only in strings and comments, found
// before toml++ sees them (toml++ 3.3 reaches undefined behaviour on some).
#include "common/toml.h"

#include <doctest/doctest.h>

#include <string>

namespace mesh {
namespace {

TomlPosition at(std::size_t line, std::size_t column) { return {line, column}; }

bool same(TomlPosition a, TomlPosition b) { return a.line == b.line && a.column == b.column; }

TEST_CASE("non-ASCII bytes in strings and comments are TOML's; elsewhere they are found") {
  // Allowed: every string kind, comments, escapes, quotes inside strings.
  CHECK(same(find_bare_non_ascii("a = \"Франкфурт\" # сервер\nb = 'é'\n"), at(0, 0)));
  CHECK(same(find_bare_non_ascii("a = \"\\\"é\\\\\"\nb = \"\"\"x\n\"é\"\n\"\"\"\n"), at(0, 0)));
  CHECK(same(find_bare_non_ascii("a = '''é\n''é'''\nb = \"\"\"é\"\"\"\"\"\n"), at(0, 0)));
  CHECK(same(find_bare_non_ascii("\"ключ\" = 1\n"), at(0, 0)));  // a quoted key
  // Refused: a bare key, after a value, after a string ends, after a
  // multi-line string with its extra quotes, at its 1-based byte column.
  CHECK(same(find_bare_non_ascii("ключ = 1\n"), at(1, 1)));
  CHECK(same(find_bare_non_ascii("a = 1\nb = 2 й\n"), at(2, 7)));
  CHECK(same(find_bare_non_ascii("a = \"x\"¡\n"), at(1, 8)));
  CHECK(same(find_bare_non_ascii("a = \"\"\"x\"\"\"\"\"¡\n"), at(1, 14)));
  // An unterminated single-line string, or a comment, ends at its line.
  CHECK(same(find_bare_non_ascii("a = \"x\nb = й\n"), at(2, 5)));
  CHECK(same(find_bare_non_ascii("a = 'x\nй\n"), at(2, 1)));
  CHECK(same(find_bare_non_ascii("# é\né\n"), at(2, 1)));
  // A backslash before a newline does not hide the newline.
  CHECK(same(find_bare_non_ascii("a = \"x\\\nй\n"), at(2, 1)));
  // Invalid UTF-8 is a byte >= 0x80 too.
  CHECK(same(find_bare_non_ascii(std::string("a = 1\xff\n")), at(1, 6)));
}

TEST_CASE("parse_toml refuses such a byte as toml++ refuses its own errors, and parses the rest") {
  try {
    (void)parse_toml("a = 1\nb = 2 й\n", "x.toml");
    FAIL("no parse_error");
  } catch (const toml::parse_error& error) {
    CHECK(std::string(error.description()) == "a non-ASCII character outside a string or comment");
    CHECK(error.source().begin.line == 2);
    CHECK(error.source().begin.column == 7);
    CHECK(*error.source().path == "x.toml");
  }
  const toml::table table = parse_toml("name = \"Zürich\" # ok\n");
  CHECK(table["name"].value_or(std::string()) == "Zürich");
}

}  // namespace
}  // namespace mesh

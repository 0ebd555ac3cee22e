// toml++, as every file of the project includes it, and the one parse
// entry they use. With MESHNODE_LEAN (top-level CMakeLists.txt) toml++'s
// implementation is compiled in common/toml.cc, so also with the
// sanitizers in the sanitizer and fuzz builds (Debian's shared library is
// neither). Their fuzzers found (tests/fuzz/regressions/*/toml-*):
// - toml++'s internal assertions, compiled out in Debian's library (built
//   with NDEBUG), fire on hostile input in builds that keep assert(): they
//   are compiled out here too, so that every build parses alike;
// - toml++ 3.3 reaches its own __builtin_unreachable() (a switch default
//   in is_non_ascii_horizontal_whitespace) on some non-ASCII characters
//   where it looks for whitespace: undefined behaviour. g++ -O1 to -O3
//   compiles that default into the function's last case, which returns
//   the right answer (false) for every such character (checked over all
//   code points, 2026-12-04). parse_toml() refuses the usual way there, a
//   non-ASCII byte outside strings and comments (TOML 1.0 allows none),
//   with a clear error; a value run straight into a string (`1"é"`) or a
//   backslash-newline in a multi-line string can still get there, and
//   the sanitizers leave that one check out of common/toml.cc.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

#define TOML_ASSERT(expr) static_assert(true)
// Nothing prints TOML through toml++ (node/config_describe.cc writes its
// own): without its formatters meshnode needs no libm (their log10).
#define TOML_ENABLE_FORMATTERS 0
#include <toml++/toml.h>

namespace mesh {

// Where `text` holds a byte >= 0x80 outside a string and a comment: its
// 1-based line and column (in bytes); {0, 0} when there is none. Strings
// are TOML's four kinds (basic, literal, multi-line of each); an
// unterminated single-line string ends at its line's end.
struct TomlPosition {
  std::size_t line = 0;
  std::size_t column = 0;
};
TomlPosition find_bare_non_ascii(std::string_view text);

// toml::parse(text, source) after find_bare_non_ascii: such a byte throws
// toml::parse_error "a non-ASCII character outside a string or comment"
// at its position, as toml::parse throws for its own errors.
toml::table parse_toml(std::string_view text, std::string source = {});

}  // namespace mesh

#include "tools/meshsim/duration.h"

#include <array>
#include <utility>

namespace mesh::sim {
namespace {

std::optional<DurationMs> unit_ms(std::string_view unit) {
  if (unit == "ms") return 1;
  if (unit == "s") return 1'000;
  if (unit == "m") return 60'000;
  if (unit == "h") return 3'600'000;
  if (unit == "d") return 86'400'000;
  return std::nullopt;
}

bool is_digit(char c) { return c >= '0' && c <= '9'; }

}  // namespace

std::optional<DurationMs> parse_duration(std::string_view text) {
  if (text == "0") return 0;
  if (text.empty()) return std::nullopt;
  DurationMs total = 0;
  std::size_t i = 0;
  while (i < text.size()) {
    DurationMs number = 0;
    std::size_t digits = 0;
    for (; i < text.size() && is_digit(text[i]); ++i, ++digits) {
      if (digits >= 12) return std::nullopt;  // beyond any sane duration
      number = number * 10 + (text[i] - '0');
    }
    std::size_t unit_start = i;
    while (i < text.size() && !is_digit(text[i])) ++i;
    if (digits == 0) return std::nullopt;
    auto unit = unit_ms(text.substr(unit_start, i - unit_start));
    if (!unit) return std::nullopt;
    if (number > kDurationMsMax / *unit) return std::nullopt;
    total += number * *unit;
    if (total > kDurationMsMax) return std::nullopt;
  }
  return total;
}

std::string format_duration(DurationMs ms) {
  if (ms == 0) return "0s";
  static constexpr std::array<std::pair<DurationMs, const char*>, 5> kUnits{{
      {86'400'000, "d"}, {3'600'000, "h"}, {60'000, "m"}, {1'000, "s"}, {1, "ms"}}};
  std::string out;
  if (ms < 0) {
    out = "-";
    ms = -ms;
  }
  for (const auto& [size, name] : kUnits) {
    if (ms >= size) {
      out += std::to_string(ms / size) + name;
      ms %= size;
    }
  }
  return out;
}

}  // namespace mesh::sim

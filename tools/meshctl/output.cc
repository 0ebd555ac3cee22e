#include "tools/meshctl/output.h"

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>

#include <nlohmann/json.hpp>

namespace mesh::ctl {
namespace {

std::size_t code_points(std::string_view text) {
  return static_cast<std::size_t>(std::count_if(text.begin(), text.end(), [](char c) {
    return (static_cast<unsigned char>(c) & 0xc0) != 0x80;
  }));
}

// The length of the valid UTF-8 sequence at `text[i]`, 0 if there is none.
std::size_t utf8_length(std::string_view text, std::size_t i) {
  const auto b = static_cast<unsigned char>(text[i]);
  const std::size_t length = b < 0x80 ? 1 : (b & 0xe0) == 0xc0 ? 2 : (b & 0xf0) == 0xe0 ? 3 : (b & 0xf8) == 0xf0 ? 4 : 0;
  if (length == 0 || i + length > text.size()) return 0;
  for (std::size_t k = 1; k < length; ++k) {
    if ((static_cast<unsigned char>(text[i + k]) & 0xc0) != 0x80) return 0;
  }
  if (length == 2 && b == 0xc2 && static_cast<unsigned char>(text[i + 1]) < 0xa0) return 0;  // C1 controls
  return length;
}

}  // namespace

Style output_style(bool no_color) {
  const char* no_color_env = std::getenv("NO_COLOR");
  const bool env_off = no_color_env != nullptr && no_color_env[0] != '\0';
  return Style{!no_color && !env_off && ::isatty(STDOUT_FILENO) == 1};
}

std::string paint(std::string_view text, Colour colour, const Style& style) {
  if (!style.colour || colour == Colour::none) return std::string(text);
  const char* code = colour == Colour::green    ? "\033[32m"
                     : colour == Colour::yellow ? "\033[33m"
                     : colour == Colour::red    ? "\033[31m"
                                                : "\033[2m";
  return code + std::string(text) + "\033[0m";
}

Colour status_colour(std::string_view status) {
  if (status == "ok") return Colour::green;
  if (status == "unreachable") return Colour::yellow;
  if (status == "unavailable") return Colour::red;
  return Colour::dim;
}

std::string printable(std::string_view text, std::size_t bytes_max) {
  std::string out;
  for (std::size_t i = 0; i < text.size() && out.size() < bytes_max;) {
    const std::size_t length = utf8_length(text, i);
    const auto b = static_cast<unsigned char>(text[i]);
    if (length == 0 || (length == 1 && (b < 0x20 || b == 0x7f))) {
      out += '?';
      ++i;
      continue;
    }
    out.append(text.substr(i, length));
    i += length;
  }
  return out;
}

Table::Table(std::vector<std::string> headers) : headers_(std::move(headers)) {}

void Table::add_row(std::vector<Cell> cells) {
  MESH_CHECK(cells.size() == headers_.size(), "Table::add_row with the wrong number of cells");
  for (Cell& cell : cells) cell.text = printable(cell.text);
  rows_.push_back(std::move(cells));
}

void Table::print(const Style& style) const {
  std::vector<std::size_t> widths(headers_.size());
  for (std::size_t c = 0; c < headers_.size(); ++c) {
    widths[c] = code_points(headers_[c]);
    for (const auto& row : rows_) widths[c] = std::max(widths[c], code_points(row[c].text));
  }
  auto print_row = [&](const std::vector<Cell>& cells) {
    std::string line;
    for (std::size_t c = 0; c < cells.size(); ++c) {
      const bool last = c + 1 == cells.size();
      line += paint(cells[c].text, cells[c].colour, style);
      if (!last) line += std::string(widths[c] - code_points(cells[c].text) + 2, ' ');
    }
    while (!line.empty() && line.back() == ' ') line.pop_back();
    std::printf("%s\n", line.c_str());
  };
  std::vector<Cell> header;
  for (const std::string& h : headers_) header.push_back(Cell{h, Colour::none});
  print_row(header);
  for (const auto& row : rows_) print_row(row);
}

int report_failure(std::string_view command, const Error<Failure>& error) {
  std::fprintf(stderr, "meshctl %.*s: %s\n", static_cast<int>(command.size()), command.data(),
               error.message.c_str());
  return exit_code_of(error.code);
}

void print_json(const nlohmann::json& json) {
  std::printf("%s\n", json.dump(2, ' ', false, nlohmann::json::error_handler_t::replace).c_str());
}

std::string age_text(const nlohmann::json& age_s) {
  if (!age_s.is_number()) return "never";
  const auto s = age_s.get<std::int64_t>();
  if (s < 120) return std::to_string(s) + " s ago";
  if (s < 2 * 3600) return std::to_string(s / 60) + " min ago";
  if (s < 2 * 86400) return std::to_string(s / 3600) + " h ago";
  return std::to_string(s / 86400) + " d ago";
}

}  // namespace mesh::ctl

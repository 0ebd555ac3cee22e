// meshctl's plain-text output: aligned tables in the spirit of `serf
// members`, colour only when stdout is a terminal (never with --no-color
// or NO_COLOR set), text from a node made printable, failures on stderr.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "common/result.h"
#include "tools/meshctl/exit_codes.h"

namespace mesh::ctl {

enum class Colour { none, green, yellow, red, dim };

struct Style {
  bool colour = false;
};
// Colour when stdout is a terminal, unless `no_color` or NO_COLOR is set.
Style output_style(bool no_color);

// `text` wrapped in the colour's escape codes when the style has colour.
std::string paint(std::string_view text, Colour colour, const Style& style);
// The colour of a server status: ok green, unreachable yellow, unavailable red, no_data dim.
Colour status_colour(std::string_view status);

// `text` with control characters (and invalid UTF-8 bytes) as '?', cut to
// `bytes_max`: what a node sends is shown, never interpreted by the terminal.
std::string printable(std::string_view text, std::size_t bytes_max = 1024);

struct Cell {
  std::string text;
  Colour colour = Colour::none;
};

// Columns two spaces apart, each as wide as its widest cell (in code
// points); the last column is not padded, so no line ends in blanks.
class Table {
 public:
  explicit Table(std::vector<std::string> headers);
  // REQUIRES: cells.size() == the number of headers.
  void add_row(std::vector<Cell> cells);
  void print(const Style& style) const;

 private:
  std::vector<std::string> headers_;
  std::vector<std::vector<Cell>> rows_;
};

// "meshctl <command>: <message>" on stderr; the failure's exit code.
int report_failure(std::string_view command, const Error<Failure>& error);

// `json` on stdout, indented.
void print_json(const nlohmann::json& json);

// "14 s ago", "3 min ago", "2 h ago", "5 d ago"; "never" for null.
std::string age_text(const nlohmann::json& age_s);

}  // namespace mesh::ctl

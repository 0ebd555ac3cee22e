// A command's output read line by line, for the CLI tests (meshctl_test,
// node_meshctl_api_test).
#pragma once

#include <sstream>
#include <string>
#include <vector>

namespace mesh::test {

inline std::vector<std::string> lines(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) out.push_back(line);
  return out;
}

// True when one line of `text` is exactly `line`.
inline bool has_line(const std::string& text, const std::string& line) {
  for (const std::string& l : lines(text)) {
    if (l == line) return true;
  }
  return false;
}

// True when one line of `text` starts with `prefix`.
inline bool starts_a_line(const std::string& text, const std::string& prefix) {
  for (const std::string& l : lines(text)) {
    if (l.rfind(prefix, 0) == 0) return true;
  }
  return false;
}

}  // namespace mesh::test

// Short human reasons for the self-check (record/report.h, SelfCheck::reason,
// at most kSelfCheckReasonBytesMax bytes).
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace mesh::node {

// `text` cut to at most `bytes_max` bytes, never inside a UTF-8 sequence
// (a cut backs off over continuation bytes 10xxxxxx). Pure.
inline std::string truncate_utf8(std::string_view text, std::size_t bytes_max) {
  if (text.size() <= bytes_max) return std::string(text);
  std::size_t end = bytes_max;
  while (end > 0 && (static_cast<unsigned char>(text[end]) & 0xC0) == 0x80) --end;
  return std::string(text.substr(0, end));
}

}  // namespace mesh::node

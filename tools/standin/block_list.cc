#include "tools/standin/block_list.h"

#include <arpa/inet.h>

#include <algorithm>
#include <vector>

namespace mesh::standin {
namespace {

// The whitespace-separated words of `line`, up to a '#'.
std::vector<std::string_view> words_of(std::string_view line) {
  line = line.substr(0, line.find('#'));
  std::vector<std::string_view> words;
  std::size_t at = 0;
  while (at < line.size()) {
    std::size_t start = line.find_first_not_of(" \t\r", at);
    if (start == std::string_view::npos) break;
    std::size_t end = line.find_first_of(" \t\r", start);
    if (end == std::string_view::npos) end = line.size();
    words.push_back(line.substr(start, end - start));
    at = end;
  }
  return words;
}

Error<BlockListError> line_error(BlockListError code, std::size_t line, const std::string& what) {
  return make_error(code, "line " + std::to_string(line) + ": " + what);
}

// One entry line into `list`.
Status<BlockListError> parse_entry(const std::vector<std::string_view>& words, std::size_t line,
                                   BlockList& list) {
  BlockAction action = BlockAction::none;
  if (words[0] == "drop") action = BlockAction::drop;
  if (words[0] == "reset") action = BlockAction::reset;
  if (action == BlockAction::none) {
    return line_error(BlockListError::bad_line, line,
                      "unknown action '" + std::string(words[0]) + "' (drop or reset)");
  }
  if (words.size() != 2) {
    return line_error(BlockListError::bad_line, line,
                      "expected '" + std::string(words[0]) + " <ip address>'");
  }
  std::string address = canonical_ip(words[1]);
  if (address.empty()) {
    return line_error(BlockListError::bad_line, line,
                      "'" + std::string(words[1]) + "' is not an IP address");
  }
  if (list.size() >= kBlockListEntriesMax) {
    return line_error(BlockListError::too_large, line,
                      "over " + std::to_string(kBlockListEntriesMax) + " entries");
  }
  if (!list.add(address, action)) {
    return line_error(BlockListError::duplicate, line, address + " is listed twice");
  }
  return Ok{};
}

}  // namespace

const char* to_string(BlockAction action) {
  switch (action) {
    case BlockAction::none: return "none";
    case BlockAction::drop: return "drop";
    case BlockAction::reset: return "reset";
  }
  return "?";
}

std::string canonical_ip(std::string_view text) {
  std::string copy(text);  // inet_pton needs a terminated string
  unsigned char bytes[16];
  char out[INET6_ADDRSTRLEN];
  if (inet_pton(AF_INET, copy.c_str(), bytes) == 1) {
    return inet_ntop(AF_INET, bytes, out, sizeof out) ? out : "";
  }
  if (inet_pton(AF_INET6, copy.c_str(), bytes) != 1) return "";
  static const unsigned char kV4MappedPrefix[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};
  bool v4_mapped = std::equal(kV4MappedPrefix, kV4MappedPrefix + 12, bytes);
  if (v4_mapped) return inet_ntop(AF_INET, bytes + 12, out, sizeof out) ? out : "";
  return inet_ntop(AF_INET6, bytes, out, sizeof out) ? out : "";
}

BlockAction BlockList::action_for(std::string_view address) const {
  auto found = entries_.find(canonical_ip(address));
  return found == entries_.end() ? BlockAction::none : found->second;
}

std::size_t BlockList::count(BlockAction action) const {
  std::size_t n = 0;
  for (const auto& [address, listed] : entries_) n += listed == action ? 1 : 0;
  return n;
}

bool BlockList::add(const std::string& address, BlockAction action) {
  return entries_.emplace(address, action).second;
}

Result<BlockList, BlockListError> parse_block_list(std::string_view text) {
  if (text.size() > kBlockFileBytesMax) {
    return make_error(BlockListError::too_large,
                      "over " + std::to_string(kBlockFileBytesMax) + " bytes");
  }
  BlockList list;
  std::size_t line = 0;
  while (!text.empty()) {
    ++line;
    std::size_t end = text.find('\n');
    std::string_view current = text.substr(0, end);
    text = end == std::string_view::npos ? std::string_view() : text.substr(end + 1);
    std::vector<std::string_view> words = words_of(current);
    if (words.empty()) continue;
    if (auto s = parse_entry(words, line, list); !s) return s.error();
  }
  return list;
}

}  // namespace mesh::standin

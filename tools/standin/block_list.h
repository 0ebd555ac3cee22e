// The stand-in listener's block file: which client addresses it treats the
// way a censor would (docs/CONFIG.md, "The stand-in VPN listener"). Pure:
// text in, a list or an error out; the listener re-reads the file.
//
//   # comment
//   reset 192.0.2.7     # reset the connection when the ClientHello arrives
//   drop  2001:db8::9   # hold the connection, never answer, close at the deadline
#pragma once

#include <cstddef>
#include <map>
#include <string>
#include <string_view>

#include "common/result.h"

namespace mesh::standin {

inline constexpr std::size_t kBlockFileBytesMax = 1024 * 1024;
inline constexpr std::size_t kBlockListEntriesMax = 65536;

enum class BlockAction { none, drop, reset };

const char* to_string(BlockAction action);

enum class BlockListError {
  bad_line,   // unknown action, missing or extra word, not an IP address
  duplicate,  // an address listed twice
  too_large,  // over kBlockFileBytesMax bytes or kBlockListEntriesMax entries
};

class BlockList {
 public:
  // What to do with a connection from `address` (as the kernel reports it:
  // any textual IPv4 or IPv6 form, IPv4-mapped IPv6 counts as IPv4).
  BlockAction action_for(std::string_view address) const;
  std::size_t count(BlockAction action) const;
  std::size_t size() const { return entries_.size(); }
  bool empty() const { return entries_.empty(); }

  // Adds one entry; false when `address` is already listed.
  // REQUIRES: `address` is canonical (canonical_ip).
  bool add(const std::string& address, BlockAction action);

 private:
  std::map<std::string, BlockAction> entries_;  // canonical address -> action
};

// The canonical text of an IP address (inet_ntop's), IPv4-mapped IPv6
// addresses as IPv4; "" when `text` is not an IP address.
std::string canonical_ip(std::string_view text);

// Parses a block file. Blank lines and `#` comments (whole-line or after an
// entry) are ignored; every other line is `drop <ip>` or `reset <ip>`. An
// error names the line: "line 3: unknown action 'dorp' (drop or reset)".
Result<BlockList, BlockListError> parse_block_list(std::string_view text);

}  // namespace mesh::standin

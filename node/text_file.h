// Reading small text files such as those under /proc.
#pragma once

#include <cstddef>
#include <string>

namespace mesh::node {

// Files larger than this are read only up to it.
inline constexpr std::size_t kTextFileBytesMax = 1 << 20;

// The first `bytes_max` bytes of a file, or "" when it cannot be opened;
// a read error keeps what was read before it. Works for /proc files, whose
// size reads as 0. Blocking; thread-safe.
std::string read_text_file(const std::string& path, std::size_t bytes_max = kTextFileBytesMax);

}  // namespace mesh::node

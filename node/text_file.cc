#include "node/text_file.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>

namespace mesh::node {
namespace {
constexpr std::size_t kReadChunkBytes = 4096;
}  // namespace

std::string read_text_file(const std::string& path, std::size_t bytes_max) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return {};
  std::string text;
  char chunk[kReadChunkBytes];
  while (text.size() < bytes_max) {
    const ssize_t got = ::read(fd, chunk, std::min(sizeof chunk, bytes_max - text.size()));
    if (got <= 0) break;  // EOF, or an error: keep what was read
    text.append(chunk, static_cast<std::size_t>(got));
  }
  ::close(fd);
  return text;
}

}  // namespace mesh::node

// load_node_config: reads the file without ever blocking on it, then hands
// the text to parse_node_config.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "common/file_kind.h"
#include "node/config.h"

namespace mesh::node {
namespace {

Error<ConfigError> unreadable(const std::string& path, const std::string& why) {
  return make_error(ConfigError::unreadable, "config " + path + ": " + why);
}

Error<ConfigError> too_large(const std::string& path) {
  return make_error(ConfigError::too_large, "config " + path + ": over " +
                                                std::to_string(kConfigFileBytesMax) +
                                                " bytes (1 MiB), the limit of a config file");
}

// Reads at most `bytes_max` + 1 bytes of `fd` into `out` (one more than
// allowed tells a file that grew past the limit after fstat).
bool read_bounded(int fd, std::size_t bytes_max, std::string& out) {
  out.assign(bytes_max + 1, '\0');
  std::size_t size = 0;
  while (size < out.size()) {
    ssize_t n = ::read(fd, out.data() + size, out.size() - size);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return false;
    if (n == 0) break;
    size += static_cast<std::size_t>(n);
  }
  out.resize(size);
  return true;
}

}  // namespace

Result<NodeConfig, ConfigError> load_node_config(const std::string& path) {
  // O_NONBLOCK: opening a FIFO for reading would otherwise wait for a writer.
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
  if (fd < 0) return unreadable(path, std::string("cannot open (") + std::strerror(errno) + ")");
  struct stat st {};
  if (::fstat(fd, &st) != 0) {
    std::string why = std::strerror(errno);
    ::close(fd);
    return unreadable(path, "cannot stat (" + why + ")");
  }
  if (!S_ISREG(st.st_mode)) {
    ::close(fd);
    return unreadable(path, std::string("is ") + file_kind(st.st_mode) +
                                ", not a regular file; give the path of the TOML file");
  }
  if (static_cast<std::uint64_t>(st.st_size) > kConfigFileBytesMax) {
    ::close(fd);
    return too_large(path);
  }
  std::string text;
  if (!read_bounded(fd, kConfigFileBytesMax, text)) {
    std::string why = std::strerror(errno);
    ::close(fd);
    return unreadable(path, "read failed (" + why + ")");
  }
  ::close(fd);
  if (text.size() > kConfigFileBytesMax) return too_large(path);  // it grew while read
  return parse_node_config(text, "config " + path);
}

}  // namespace mesh::node

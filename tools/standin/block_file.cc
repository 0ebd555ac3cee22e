#include "tools/standin/block_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace mesh::standin {
namespace {

// Reads the whole file, refusing anything but a regular file of at most
// kBlockFileBytesMax bytes (O_NONBLOCK: a FIFO must not block the listener).
bool read_small_file(const std::string& path, std::string& text, std::string& error) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
  if (fd < 0) {
    error = std::string("cannot open (") + std::strerror(errno) + ")";
    return false;
  }
  struct stat st {};
  bool ok = ::fstat(fd, &st) == 0 && S_ISREG(st.st_mode);
  if (!ok) error = "not a regular file";
  text.assign(kBlockFileBytesMax + 1, '\0');
  std::size_t size = 0;
  while (ok && size < text.size()) {
    ssize_t n = ::read(fd, text.data() + size, text.size() - size);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      error = std::string("read failed (") + std::strerror(errno) + ")";
      ok = false;
    }
    if (n <= 0) break;
    size += static_cast<std::size_t>(n);
  }
  ::close(fd);
  text.resize(size);
  return ok;
}

}  // namespace

BlockFile::Stamp BlockFile::stamp_now() const {
  struct stat st {};
  Stamp stamp;
  if (::stat(path_.c_str(), &st) != 0) return stamp;
  stamp.exists = true;
  stamp.mtime = st.st_mtim;
  stamp.size = static_cast<long long>(st.st_size);
  stamp.inode = static_cast<unsigned long long>(st.st_ino);
  return stamp;
}

std::string BlockFile::counts() const {
  return std::to_string(list_.count(BlockAction::drop)) + " drop, " +
         std::to_string(list_.count(BlockAction::reset)) + " reset";
}

std::string BlockFile::refresh(bool force) {
  Stamp now = stamp_now();
  if (!force && looked_ && now == last_) return "";
  looked_ = true;
  last_ = now;
  std::string prefix = "block file " + path_ + ": ";
  if (!now.exists) {
    list_ = BlockList{};
    return prefix + "absent, no blocks (0 drop, 0 reset)";
  }
  std::string text;
  std::string error;
  if (!read_small_file(path_, text, error)) {
    return prefix + error + "; keeping the previous list (" + counts() + ")";
  }
  auto parsed = parse_block_list(text);
  if (!parsed) {
    return prefix + parsed.message() + "; keeping the previous list (" + counts() + ")";
  }
  list_ = std::move(*parsed);
  return prefix + "loaded (" + counts() + ")";
}

}  // namespace mesh::standin

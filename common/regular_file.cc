#include "common/regular_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "common/file_kind.h"

namespace mesh {
namespace {

// Closes the descriptor on every path out.
struct FdCloser {
  int fd;
  ~FdCloser() { ::close(fd); }
};

}  // namespace

Result<std::string, FileReadError> read_regular_file(const std::string& path, std::size_t bytes_max,
                                                      FileReadMode mode) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
  if (fd < 0) {
    const int error = errno;
    return make_error(error == ENOENT ? FileReadError::missing : FileReadError::unreadable,
                      std::string("cannot be opened (") + std::strerror(error) + ")");
  }
  FdCloser closer{fd};
  struct stat st {};
  if (::fstat(fd, &st) != 0) {
    return make_error(FileReadError::unreadable, std::string("cannot be examined (") + std::strerror(errno) + ")");
  }
  if (!S_ISREG(st.st_mode)) {
    return make_error(FileReadError::not_regular, std::string("is ") + file_kind(st.st_mode) +
                                                      ", not a regular file");
  }
  auto too_large = [&] {
    return make_error(FileReadError::too_large, "is over " + std::to_string(bytes_max) + " bytes");
  };
  if (mode == FileReadMode::whole && static_cast<std::uint64_t>(st.st_size) > bytes_max) return too_large();
  // One byte more than allowed tells a file that grew past the bound. The
  // buffer starts at what fstat says (and a page: /proc's files say 0) and
  // grows as the file does: a roster file's bound is 1 MiB, and a buffer
  // of the bound, zeroed at every start, left the daemon's heap 1 MiB
  // larger for good (its RSS at N = 100 8.4 instead of 7.4 MiB, 2026-12-06).
  const std::size_t want = mode == FileReadMode::whole ? bytes_max + 1 : bytes_max;
  const std::size_t guess = std::max<std::size_t>(static_cast<std::size_t>(st.st_size) + 1, 4096);
  std::string out(std::min(want, guess), '\0');
  std::size_t size = 0;
  while (size < want) {
    if (size == out.size()) out.resize(std::min(want, 2 * out.size()));
    const ssize_t n = ::read(fd, out.data() + size, out.size() - size);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      return make_error(FileReadError::unreadable, std::string("cannot be read (") + std::strerror(errno) + ")");
    }
    if (n == 0) break;
    size += static_cast<std::size_t>(n);
  }
  out.resize(size);
  out.shrink_to_fit();
  if (mode == FileReadMode::whole && size > bytes_max) return too_large();
  return out;
}

}  // namespace mesh

#include "common/regular_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

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
  // One byte more than allowed tells a file that grew past the bound.
  const std::size_t want = mode == FileReadMode::whole ? bytes_max + 1 : bytes_max;
  std::string out(want, '\0');
  std::size_t size = 0;
  while (size < want) {
    const ssize_t n = ::read(fd, out.data() + size, want - size);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      return make_error(FileReadError::unreadable, std::string("cannot be read (") + std::strerror(errno) + ")");
    }
    if (n == 0) break;
    size += static_cast<std::size_t>(n);
  }
  out.resize(size);
  if (mode == FileReadMode::whole && size > bytes_max) return too_large();
  return out;
}

}  // namespace mesh

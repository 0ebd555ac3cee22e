#include "node/api/shared_body.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>

namespace mesh::api {
namespace {

// A memfd holding `text`, sealed so that nothing can change it while
// responses are read from it; -1 on any failure.
int sealed_memfd(const std::string& text) {
  const int fd = ::memfd_create("meshnode-api-body", MFD_CLOEXEC | MFD_ALLOW_SEALING);
  if (fd < 0) return -1;
  std::size_t written = 0;
  while (written < text.size()) {
    const ssize_t n = ::write(fd, text.data() + written, text.size() - written);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      ::close(fd);
      return -1;
    }
    written += static_cast<std::size_t>(n);
  }
  if (::fcntl(fd, F_ADD_SEALS, F_SEAL_WRITE | F_SEAL_GROW | F_SEAL_SHRINK | F_SEAL_SEAL) != 0) {
    ::close(fd);
    return -1;
  }
  return fd;
}

}  // namespace

SharedBody::SharedBody(std::string text) : text_(std::move(text)), fd_(sealed_memfd(text_)) {}

SharedBody::~SharedBody() {
  if (fd_ >= 0) ::close(fd_);
}

}  // namespace mesh::api

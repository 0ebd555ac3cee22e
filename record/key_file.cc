// Secret key files: "meshnode-secret-key-v1 <128 hex chars>\n", mode 0600.
#include <fcntl.h>
#include <sodium.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "record/keys.h"
#include "record/sodium_init.h"

namespace mesh {
namespace {

constexpr std::string_view kKeyFileTag = "meshnode-secret-key-v1 ";
// Tag + 128 hex + newline; anything longer is not a key file.
constexpr std::size_t kKeyFileBytesMax = 23 + 2 * kSecretKeyBytes + 1;
static_assert(kKeyFileTag.size() == 23);

std::string errno_text() { return std::strerror(errno); }

std::string mode_text(mode_t mode) {
  char text[8];
  std::snprintf(text, sizeof text, "%04o", static_cast<unsigned>(mode & 07777));
  return text;
}

// Writes all of `text` to `fd`, retrying short writes and EINTR.
bool write_all(int fd, std::string_view text) {
  while (!text.empty()) {
    ssize_t n = ::write(fd, text.data(), text.size());
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    text.remove_prefix(static_cast<std::size_t>(n));
  }
  return true;
}

// Parses the file body; checks the embedded public half against the seed.
Result<SecretKey, KeyError> parse_key_file(const std::string& path, std::string_view text) {
  auto malformed = [&](const std::string& why) {
    return make_error(KeyError::file_malformed, "key file " + path + ": " + why);
  };
  if (!text.empty() && text.back() == '\n') text.remove_suffix(1);  // final newline optional
  if (text.substr(0, kKeyFileTag.size()) != kKeyFileTag) {
    return malformed("does not start with 'meshnode-secret-key-v1 '");
  }
  std::string_view hex = text.substr(kKeyFileTag.size());
  std::optional<Bytes> bytes = from_hex(hex);
  if (hex.size() != 2 * kSecretKeyBytes || !bytes) {
    return malformed("expected 128 hex characters after the tag");
  }
  SecretKey key;
  std::copy(bytes->begin(), bytes->end(), key.bytes.begin());
  KeyPair derived = key_pair_from_seed(ByteView(key.bytes).first(crypto_sign_SEEDBYTES));
  if (derived.secret_key.bytes != key.bytes) {
    sodium_memzero(derived.secret_key.bytes.data(), derived.secret_key.bytes.size());
    return malformed("public half does not match the key derived from its seed");
  }
  sodium_memzero(derived.secret_key.bytes.data(), derived.secret_key.bytes.size());
  return key;
}

}  // namespace

Status<KeyError> write_secret_key_file(const std::string& path, const SecretKey& key) {
  int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600);
  if (fd < 0) {
    return make_error(KeyError::file_write_failed,
                      "key file " + path + ": cannot create (" + errno_text() + ")");
  }
  std::string text = std::string(kKeyFileTag) + to_hex(key.bytes) + "\n";
  // fchmod makes the mode 0600 whatever the umask was.
  bool ok = ::fchmod(fd, 0600) == 0 && write_all(fd, text) && ::fsync(fd) == 0;
  std::string why = ok ? "" : errno_text();
  sodium_memzero(text.data(), text.size());
  if (::close(fd) != 0 && ok) {
    ok = false;
    why = errno_text();
  }
  if (!ok) {
    ::unlink(path.c_str());  // never leave a half-written key behind
    return make_error(KeyError::file_write_failed,
                      "key file " + path + ": write failed (" + why + ")");
  }
  return Ok{};
}

Result<SecretKey, KeyError> load_secret_key_file(const std::string& path) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    return make_error(KeyError::file_unreadable,
                      "key file " + path + ": cannot open (" + errno_text() + ")");
  }
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd);
    return make_error(KeyError::file_unreadable, "key file " + path + ": not a regular file");
  }
  if ((st.st_mode & 077) != 0) {
    ::close(fd);
    return make_error(KeyError::file_permissions,
                      "key file " + path + ": mode " + mode_text(st.st_mode) +
                          " lets group or others read it; chmod 600 it");
  }
  std::string text(kKeyFileBytesMax + 1, '\0');
  std::size_t size = 0;
  while (size < text.size()) {
    ssize_t n = ::read(fd, text.data() + size, text.size() - size);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      std::string why = errno_text();
      ::close(fd);
      return make_error(KeyError::file_unreadable,
                        "key file " + path + ": read failed (" + why + ")");
    }
    if (n == 0) break;
    size += static_cast<std::size_t>(n);
  }
  ::close(fd);
  Result<SecretKey, KeyError> key =
      size > kKeyFileBytesMax
          ? Result<SecretKey, KeyError>(make_error(KeyError::file_malformed,
                                                   "key file " + path + ": longer than a key file"))
          : parse_key_file(path, std::string_view(text).substr(0, size));
  sodium_memzero(text.data(), text.size());
  return key;
}

}  // namespace mesh

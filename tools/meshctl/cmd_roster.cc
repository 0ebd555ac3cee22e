#include <cerrno>
#include <chrono>
#include <cstring>
#include <cstdio>
#include <fcntl.h>
#include <unistd.h>

#include <nlohmann/json.hpp>

#include "record/roster_toml.h"
#include "tools/meshctl/commands.h"
#include "tools/meshctl/exit_codes.h"
#include "tools/meshctl/inspect.h"

namespace mesh::ctl {
namespace {

inline constexpr std::size_t kRosterTomlBytesMax = 4 * 1024 * 1024;

// Writes `bytes` to a new file (never over an existing one, so a signed
// roster is not replaced by accident).
bool write_new_file(const std::string& path, const Bytes& bytes, std::string& error) {
  int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
  if (fd < 0) {
    error = "cannot create '" + path + "': " + std::strerror(errno);
    return false;
  }
  std::size_t done = 0;
  while (done < bytes.size()) {
    ssize_t n = ::write(fd, bytes.data() + done, bytes.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      error = "cannot write '" + path + "': " + std::strerror(errno);
      ::close(fd);
      ::unlink(path.c_str());
      return false;
    }
    done += static_cast<std::size_t>(n);
  }
  if (::fsync(fd) != 0 || ::close(fd) != 0) {
    error = "cannot write '" + path + "': " + std::strerror(errno);
    ::unlink(path.c_str());
    return false;
  }
  return true;
}

UnixMs wall_clock_ms() {
  using namespace std::chrono;
  return duration_cast<milliseconds>(system_clock::now().time_since_epoch()).count();
}

}  // namespace

int run_roster_sign(const RosterSignOptions& options) {
  std::string error;
  auto text = read_file(options.toml_path, kRosterTomlBytesMax, error);
  if (!text) {
    std::fprintf(stderr, "meshctl roster sign: %s\n", error.c_str());
    return kExitUsage;
  }
  std::string_view toml(reinterpret_cast<const char*>(text->data()), text->size());
  auto roster = roster_from_toml(toml, options.version);
  if (!roster) {
    std::fprintf(stderr, "meshctl roster sign: %s: %s\n", options.toml_path.c_str(),
                 roster.message().c_str());
    return kExitUsage;
  }
  auto key = load_secret_key_file(options.key_path);
  if (!key) {
    std::fprintf(stderr, "meshctl roster sign: %s\n", key.message().c_str());
    return kExitUsage;
  }
  Bytes payload = encode_roster_payload(*roster);
  if (payload.size() > kRosterPayloadBytesMax) {
    std::fprintf(stderr, "meshctl roster sign: the roster encodes to %zu bytes, over the %zu-byte limit\n",
                 payload.size(), kRosterPayloadBytesMax);
    return kExitUsage;
  }
  Bytes record = encode_signed_record(RecordKind::roster, kOperatorOrigin, roster->version,
                                      wall_clock_ms(), payload, *key);
  if (!write_new_file(options.out_path, record, error)) {
    std::fprintf(stderr, "meshctl roster sign: %s\n", error.c_str());
    return kExitUsage;
  }
  std::string operator_hex = public_key_to_hex(key->public_key());
  if (options.json) {
    nlohmann::json out = {{"file", options.out_path},        {"version", roster->version},
                          {"servers", roster->servers.size()}, {"routes", roster->routes.size()},
                          {"bytes", record.size()},          {"operator_key", operator_hex}};
    std::printf("%s\n", out.dump().c_str());
  } else {
    std::printf("signed roster version %llu: %zu servers, %zu routes, %zu bytes -> %s\n"
                "operator key %s\n",
                static_cast<unsigned long long>(roster->version), roster->servers.size(),
                roster->routes.size(), record.size(), options.out_path.c_str(), operator_hex.c_str());
  }
  return kExitOk;
}

int run_roster_show(const RosterShowOptions& options) {
  std::string error;
  std::optional<Bytes> raw;
  if (!options.data_dir.empty()) {
    raw = read_store_roster(options.data_dir, error);
  } else if (!options.file_path.empty()) {
    raw = read_file(options.file_path, kRecordBytesMax, error);
  } else {
    error = "give --data DIR or --file FILE";
  }
  if (!raw) {
    std::fprintf(stderr, "meshctl roster show: %s\n", error.c_str());
    return kExitUsage;
  }
  bool signature_failed = false;
  auto signed_roster = open_signed_roster(*raw, options.operator_key, error, signature_failed);
  if (!signed_roster) {
    std::fprintf(stderr, "meshctl roster show: %s\n", error.c_str());
    return signature_failed ? kExitCheckFailed : kExitUsage;
  }
  const char* checked = options.operator_key.empty() ? "not checked (no --operator-key)" : "valid";
  if (options.json) {
    nlohmann::json out = roster_to_json(signed_roster->roster);
    out["signature"] = options.operator_key.empty() ? "unchecked" : "valid";
    out["signed_at_ms"] = signed_roster->envelope.timestamp_ms;
    std::printf("%s\n", out.dump(2).c_str());
  } else {
    std::printf("# roster version %llu, signed at %lld ms, signature %s\n%s",
                static_cast<unsigned long long>(signed_roster->roster.version),
                static_cast<long long>(signed_roster->envelope.timestamp_ms), checked,
                roster_to_toml(signed_roster->roster).c_str());
  }
  return kExitOk;
}

}  // namespace mesh::ctl

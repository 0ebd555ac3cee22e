// meshctl roster sign (TOML -> signed roster record) and roster show (a
// signed roster from a file or a store, checked against the operator key
// unless --no-verify says, on every line, that it is not).
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>

#include <nlohmann/json.hpp>

#include "record/roster_toml.h"
#include "tools/meshctl/commands.h"
#include "tools/meshctl/exit_codes.h"
#include "tools/meshctl/inspect.h"

namespace mesh::ctl {
namespace {

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

namespace {

constexpr const char* kNotVerified = "NOT VERIFIED";

// Every line of `toml` marked, as a TOML comment, so that no line of an
// unchecked roster can pass for a checked one (the text stays valid TOML).
std::string marked_not_verified(const std::string& toml) {
  std::string out;
  std::size_t start = 0;
  while (start < toml.size()) {
    const std::size_t end = std::min(toml.find('\n', start), toml.size());
    const std::string line = toml.substr(start, end - start);
    out += (line.empty() ? "# " : line + "  # ") + kNotVerified + "\n";
    start = end + 1;
  }
  return out;
}

void print_roster(const SignedRoster& roster, bool verified, bool json) {
  if (json) {
    nlohmann::json out = roster_to_json(roster.roster);
    out["signature"] = verified ? "valid" : kNotVerified;
    out["signed_at_ms"] = roster.envelope.timestamp_ms;
    std::printf("%s\n", out.dump(2).c_str());
    return;
  }
  const std::string header = "# roster version " + std::to_string(roster.roster.version) + ", signed at " +
                             std::to_string(roster.envelope.timestamp_ms) + " ms, signature " +
                             (verified ? "valid" : "NOT VERIFIED (--no-verify)") + "\n";
  const std::string body = roster_to_toml(roster.roster);
  std::printf("%s", verified ? (header + body).c_str() : marked_not_verified(header + body).c_str());
}

}  // namespace

int run_roster_show(const RosterShowOptions& options) {
  // An unset variable in a script ("--operator-key $KEY") must not skip the check.
  if (options.no_verify && !options.operator_key.empty()) {
    std::fprintf(stderr, "meshctl roster show: give --operator-key HEX or --no-verify, not both\n");
    return kExitUsage;
  }
  if (!options.no_verify && options.operator_key.empty()) {
    std::fprintf(stderr, "meshctl roster show: --operator-key HEX is required; --no-verify to show a "
                         "roster without checking it\n");
    return kExitUsage;
  }
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
  if (options.no_verify) {
    std::fprintf(stderr, "meshctl roster show: --no-verify: the roster's signature is NOT VERIFIED\n");
  }
  print_roster(*signed_roster, !options.no_verify, options.json);
  return kExitOk;
}

}  // namespace mesh::ctl

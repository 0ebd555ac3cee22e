#include "tools/meshctl/inspect.h"

#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include <nlohmann/json.hpp>

#include "common/file_kind.h"
#include "common/regular_file.h"
#include "record/parameters.h"
#include "storage/store.h"
#include "storage/txn.h"

namespace mesh::ctl {

namespace {

// A regular file's content up to `bytes_max` (common/regular_file.h);
// nullopt with `error` set ("'<path>' is a FIFO, not a regular file").
std::optional<Bytes> read_input(const std::string& path, std::size_t bytes_max, FileReadMode mode,
                                std::string& error) {
  auto text = read_regular_file(path, bytes_max, mode);
  if (!text) {
    error = "'" + path + "' " + text.message();
    return std::nullopt;
  }
  return Bytes(text->begin(), text->end());
}

// LMDB's meta page: a 16-byte page header, then MDB_meta's magic (native
// byte order, little-endian here).
constexpr std::uint32_t kLmdbMagic = 0xBEEFC0DE;
constexpr std::size_t kLmdbMagicOffset = 16;

// Refuses a data.mdb that LMDB would fail on with a confusing message
// ("Bad file descriptor" for an empty one). A missing one is left to
// Store::open, which says there is no store.
bool looks_like_store(const std::string& data_dir, std::string& error) {
  const std::string path = data_dir + "/data.mdb";
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) return true;
  const std::string not_store = "'" + data_dir + "' is not a meshnode store: ";
  if (!S_ISREG(st.st_mode)) {
    error = not_store + "its data.mdb is " + file_kind(st.st_mode);
    return false;
  }
  if (st.st_size == 0) {
    error = not_store + "its data.mdb is empty";
    return false;
  }
  // The meta page's head is enough; the file is as large as the store.
  auto head = read_input(path, kLmdbMagicOffset + sizeof(std::uint32_t), FileReadMode::prefix, error);
  if (!head) return false;
  std::uint32_t magic = 0;
  if (head->size() >= kLmdbMagicOffset + sizeof magic) {
    std::memcpy(&magic, head->data() + kLmdbMagicOffset, sizeof magic);
  }
  if (magic != kLmdbMagic) {
    error = not_store + "its data.mdb is not an LMDB file";
    return false;
  }
  return true;
}

}  // namespace

bool is_regular_file(const std::string& path, std::string& error) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) {
    error = "cannot open '" + path + "': " + std::strerror(errno);
    return false;
  }
  if (!S_ISREG(st.st_mode)) {
    error = "'" + path + "' is " + file_kind(st.st_mode) + ", not a regular file";
    return false;
  }
  return true;
}

std::optional<Bytes> read_file(const std::string& path, std::size_t bytes_max, std::string& error) {
  return read_input(path, bytes_max, FileReadMode::whole, error);
}

std::optional<StoreSnapshot> open_store_snapshot(const std::string& data_dir, std::string& error) {
  if (!looks_like_store(data_dir, error)) return std::nullopt;
  StoreOptions options;
  options.read_only = true;
  auto store = Store::open(data_dir, options);
  if (!store) {
    error = store.message();
    return std::nullopt;
  }
  auto txn = (*store)->begin_read();
  if (!txn) {
    error = txn.message();
    return std::nullopt;
  }
  StoreSnapshot snapshot;
  snapshot.store = std::move(store.value());
  snapshot.txn.emplace(std::move(txn.value()));
  return snapshot;
}

std::optional<Bytes> read_store_roster(const std::string& data_dir, std::string& error) {
  auto snapshot = open_store_snapshot(data_dir, error);
  if (!snapshot) return std::nullopt;
  auto roster = snapshot->txn->get_roster();
  if (!roster) {
    error = roster.message();
    return std::nullopt;
  }
  if (!roster->has_value()) {
    error = "the store in '" + data_dir + "' holds no roster yet";
    return std::nullopt;
  }
  return std::move(**roster);
}

std::optional<SignedRoster> open_signed_roster(const Bytes& raw, const std::string& operator_key_hex,
                                               std::string& error, bool& signature_failed) {
  signature_failed = false;
  auto envelope = decode_envelope(raw);
  if (!envelope) {
    error = "not a signed record: " + envelope.message();
    return std::nullopt;
  }
  if (envelope->kind != RecordKind::roster) {
    error = "the record is a " + std::string(to_string(envelope->kind)) + ", not a roster";
    return std::nullopt;
  }
  if (!operator_key_hex.empty()) {
    auto key = public_key_from_hex(operator_key_hex);
    if (!key) {
      error = "--operator-key: " + key.message();
      return std::nullopt;
    }
    auto verified = verify_envelope(*envelope, *key);
    if (!verified) {
      error = "roster signature check failed: " + verified.message();
      signature_failed = true;
      return std::nullopt;
    }
  }
  auto roster = decode_roster_payload(envelope->payload, envelope->seq);
  if (!roster) {
    error = "roster payload: " + roster.message();
    return std::nullopt;
  }
  return SignedRoster{std::move(*envelope), std::move(*roster)};
}

nlohmann::json roster_to_json(const Roster& roster) {
  nlohmann::json routes = nlohmann::json::array();
  for (const Route& route : roster.routes) routes.push_back({{"id", route.id}, {"name", route.name}});
  nlohmann::json servers = nlohmann::json::array();
  for (const ServerEntry& s : roster.servers) {
    servers.push_back({{"id", s.id},
                       {"country", s.country},
                       {"probe", format_endpoint(s.probe)},
                       {"sni", s.sni},
                       {"gossip", format_endpoint(s.gossip)},
                       {"key", public_key_to_hex(s.key)},
                       {"routes", s.routes}});
  }
  nlohmann::json params = nlohmann::json::object();
  for (const ParameterSpec& spec : parameter_specs()) params[spec.name] = spec.get(roster.params);
  return {{"version", roster.version}, {"routes", routes}, {"servers", servers}, {"params", params}};
}

}  // namespace mesh::ctl

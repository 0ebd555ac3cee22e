#include "tools/meshctl/inspect.h"

#include <fstream>
#include <iterator>

#include <nlohmann/json.hpp>

#include "record/parameters.h"
#include "storage/store.h"
#include "storage/txn.h"

namespace mesh::ctl {

std::optional<Bytes> read_file(const std::string& path, std::size_t bytes_max, std::string& error) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    error = "cannot open '" + path + "'";
    return std::nullopt;
  }
  Bytes content;
  char chunk[4096];
  while (in.read(chunk, sizeof chunk) || in.gcount() > 0) {
    content.insert(content.end(), chunk, chunk + in.gcount());
    if (content.size() > bytes_max) {
      error = "'" + path + "' is larger than " + std::to_string(bytes_max) + " bytes";
      return std::nullopt;
    }
  }
  return content;
}

std::optional<StoreSnapshot> open_store_snapshot(const std::string& data_dir, std::string& error) {
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
    error = "the record is a " + std::string(kind_name(envelope->kind)) + ", not a roster";
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

const char* kind_name(RecordKind kind) {
  switch (kind) {
    case RecordKind::roster: return "roster";
    case RecordKind::report: return "report";
  }
  return "unknown";
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

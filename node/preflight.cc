#include "node/preflight.h"

#include <boost/asio/io_context.hpp>

#include <filesystem>

#include "node/api/server.h"
#include "node/data_dir_check.h"
#include "node/roster_check.h"
#include "node/transport.h"
#include "record/envelope.h"
#include "storage/layout.h"
#include "storage/store.h"
#include "storage/txn.h"

namespace mesh::node {
namespace {

using Lines = std::vector<CheckLine>;

void add(Lines& lines, CheckOutcome outcome, std::string what, std::string detail) {
  lines.push_back({outcome, std::move(what), std::move(detail)});
}

// What the data dir's store holds, read-only; opened only when both of its
// files are there (a read-only open never creates one, and a store the
// service user cannot read is check_data_dir's to report).
struct StoreLook {
  bool present = false;
  std::optional<std::string> error;
  std::optional<std::string> identity;  // the node id it was stamped with
  std::optional<Bytes> roster;
};

StoreLook look_at_store(const std::string& dir) {
  namespace fs = std::filesystem;
  StoreLook look;
  std::error_code ec;
  if (!fs::exists(fs::path(dir) / "data.mdb", ec) || !fs::exists(fs::path(dir) / "lock.mdb", ec)) return look;
  look.present = true;
  StoreOptions options;
  options.read_only = true;
  auto store = Store::open(dir, options);
  if (!store) {
    look.error = store.message();
    return look;
  }
  auto txn = (*store)->begin_read();
  if (!txn) {
    look.error = txn.message();
    return look;
  }
  if (auto identity = txn->get_state(kNodeIdentityKey); identity && identity->has_value()) {
    const Bytes& bytes = **identity;
    look.identity = std::string(bytes.begin(), std::find(bytes.begin(), bytes.end(), std::uint8_t{0}));
  }
  if (auto roster = txn->get_roster(); roster && roster->has_value()) look.roster = **roster;
  return look;
}

std::optional<PublicKey> check_key(const NodeConfig& config, Lines& lines) {
  auto key = load_secret_key_file(config.key_file);
  if (!key) {
    add(lines, CheckOutcome::fail, "key file", "'" + config.key_file + "': " + key.message());
    return std::nullopt;
  }
  add(lines, CheckOutcome::ok, "key file", "'" + config.key_file + "': public key " + public_key_to_hex(key->public_key()));
  return key->public_key();
}

std::optional<Roster> check_roster(const NodeConfig& config, const StoreLook& store,
                                   const std::optional<PublicKey>& node_key, Lines& lines) {
  std::vector<NamedKey> known;
  if (node_key) known.push_back({"this node's key (" + config.key_file + ")", *node_key});
  const StartRoster start = choose_start_roster(read_roster_file(config.roster_file), store.roster,
                                                config.operator_key, known);
  if (!start.held) {
    add(lines, CheckOutcome::fail, "roster", start.no_roster);
    return std::nullopt;
  }
  add(lines, CheckOutcome::ok, "roster",
      start.source + ": version " + std::to_string(start.held->version) + ", " +
          std::to_string(start.held->servers.size()) + " servers, signed by operator_key " +
          public_key_to_hex(config.operator_key));
  if (start.file_problem) {
    add(lines, CheckOutcome::warn, "roster file",
        *start.file_problem + " (the data dir's roster starts the node, which reports the file as a problem)");
  }
  return start.held;
}

void check_entry(const NodeConfig& config, const Roster& roster, const PublicKey& node_key, Lines& lines) {
  if (auto problem = check_membership(roster, config.node_id, node_key)) {
    add(lines, CheckOutcome::fail, "roster entry", problem->message);
    return;
  }
  add(lines, CheckOutcome::ok, "roster entry",
      "'" + config.node_id + "' is in roster version " + std::to_string(roster.version) + " with this node's key");
  const ServerEntry& self = *roster.find(config.node_id);
  if (auto mismatch = gossip_endpoint_mismatch(self.gossip, config.gossip.listen)) {
    add(lines, CheckOutcome::warn, "gossip endpoint", *mismatch);
  } else {
    add(lines, CheckOutcome::ok, "gossip endpoint",
        "the roster's " + format_endpoint(self.gossip) + " reaches [gossip] listen " +
            format_endpoint(config.gossip.listen));
  }
}

// The gossip listener, bound and released as a start binds it.
void check_gossip_port(const NodeConfig& config, Lines& lines) {
  boost::asio::io_context io;
  TransportSettings settings;
  settings.listen = config.gossip.listen;
  Transport transport(io, [](std::function<void()>) {}, settings, 0,
                      TransportCallbacks{.on_frame = [](Bytes, InboundId) {}});
  auto bound = transport.start();
  transport.stop();
  if (bound) {
    add(lines, CheckOutcome::ok, "gossip listen", format_endpoint(config.gossip.listen) + " is free");
  } else {
    add(lines, CheckOutcome::fail, "gossip listen",
        bound.message() + " (a running meshnode holds it too: stop it before checking its ports)");
  }
}

// The API as a start sets it up: its tokens, its certificate (and
// OpenSSL), its address bound and released.
void check_api(const NodeConfig& config, Lines& lines) {
  if (!config.api.listen) {
    add(lines, CheckOutcome::ok, "api", "off ([api] listen = \"\")");
    return;
  }
  auto tokens = api::TokenSet::load(config.api.token_file);
  if (!tokens) {
    add(lines, CheckOutcome::fail, "api token file", tokens.message());
  } else if (auto exposed = api::token_file_exposed(config.api.token_file)) {
    add(lines, CheckOutcome::warn, "api token file", *exposed);
  } else {
    add(lines, CheckOutcome::ok, "api token file",
        "'" + config.api.token_file + "': " + std::to_string(tokens->size()) + " tokens, not readable by others");
  }
  boost::asio::io_context io;
  api::SnapshotBox snapshots;
  api::ApiServer server(io, {*config.api.listen, config.api.tls_cert_file, config.api.tls_key_file},
                        std::make_shared<const api::TokenSet>(), snapshots, nullptr);
  auto bound = server.start();
  server.stop();
  const std::string where = std::string(config.api.tls_cert_file.empty() ? "http://" : "https://") +
                            format_endpoint(*config.api.listen);
  if (bound) {
    add(lines, CheckOutcome::ok, "api listen",
        where + " is free" + (config.api.tls_cert_file.empty() ? "" : "; certificate and key load and match"));
  } else {
    add(lines, CheckOutcome::fail, "api listen", bound.message());
  }
}

void check_data(const NodeConfig& config, const StoreLook& store, Lines& lines) {
  // As root, the dir is checked for its owner, who runs the service.
  auto dir = check_data_dir_for_service(config.data_dir);
  if (!dir) {
    add(lines, CheckOutcome::fail, "data dir", dir.message());
    return;
  }
  std::string held = "; no store yet (the first start makes one)";
  if (store.error) {
    add(lines, CheckOutcome::fail, "data dir", "'" + config.data_dir + "': its store: " + *store.error);
    return;
  }
  if (store.identity && *store.identity != config.node_id) {
    add(lines, CheckOutcome::fail, "data dir",
        "'" + config.data_dir + "' belongs to node '" + *store.identity + "'; each node needs its own data dir");
    return;
  }
  if (store.present) held = "; holds node '" + config.node_id + "''s store";
  add(lines, CheckOutcome::ok, "data dir", "'" + config.data_dir + "' " + dir.value() + held);
}

}  // namespace

std::vector<CheckLine> preflight(const NodeConfig& config) {
  Lines lines;
  const StoreLook store = look_at_store(config.data_dir);
  const auto node_key = check_key(config, lines);
  const auto roster = check_roster(config, store, node_key, lines);
  if (roster && node_key) check_entry(config, *roster, *node_key, lines);
  check_gossip_port(config, lines);
  check_api(config, lines);
  check_data(config, store, lines);
  return lines;
}

std::string format_check(const CheckLine& line) {
  const char* mark = line.outcome == CheckOutcome::ok ? "ok  " : line.outcome == CheckOutcome::warn ? "WARN" : "FAIL";
  return std::string(mark) + "  " + line.what + ": " + line.detail;
}

}  // namespace mesh::node

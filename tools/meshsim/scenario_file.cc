#include "tools/meshsim/scenario_file.h"

#include <algorithm>
#include <fstream>
#include <set>
#include <sstream>

#include "common/toml.h"
#include "record/parameters.h"
#include "tools/meshsim/duration.h"

namespace mesh::sim {
namespace {

using Fail = Error<ScenarioError>;

// Reads one table, remembering which keys were used so that the rest can be
// reported as unknown (typos must not pass silently).
class Reader {
 public:
  Reader(const toml::table& table, std::string where, const std::string& source)
      : table_(table), where_(std::move(where)), source_(source) {}

  const toml::node* get(std::string_view key) {
    used_.insert(std::string(key));
    return table_.get(key);
  }
  Fail fail(const toml::node* node, std::string_view key, const std::string& what) const {
    return make_error(ScenarioError::bad_field, at(node) + field(key) + ": " + what);
  }
  std::string at(const toml::node* node) const {
    const toml::node* located = node != nullptr ? node : &table_;
    return source_ + ":" + std::to_string(located->source().begin.line) + ": ";
  }
  std::string field(std::string_view key) const {
    return where_.empty() ? std::string(key) : where_ + "." + std::string(key);
  }
  const std::string& source() const { return source_; }

  Status<ScenarioError> check_unknown() const {
    for (const auto& [key, node] : table_) {
      if (!used_.contains(std::string(key.str()))) {
        return make_error(ScenarioError::unknown_field,
                          at(&node) + "unknown field '" + field(key.str()) + "'");
      }
    }
    return Ok{};
  }

  // Each reader leaves `out` alone when the key is absent.
  Status<ScenarioError> string(std::string_view key, std::string& out) {
    const toml::node* node = get(key);
    if (node == nullptr) return Ok{};
    if (!node->is_string()) return fail(node, key, "expected a string");
    out = *node->value<std::string>();
    return Ok{};
  }
  Status<ScenarioError> boolean(std::string_view key, bool& out) {
    const toml::node* node = get(key);
    if (node == nullptr) return Ok{};
    if (!node->is_boolean()) return fail(node, key, "expected true or false");
    out = *node->value<bool>();
    return Ok{};
  }
  template <class T>
  Status<ScenarioError> integer(std::string_view key, T& out, std::int64_t min, std::int64_t max) {
    const toml::node* node = get(key);
    if (node == nullptr) return Ok{};
    if (!node->is_integer()) return fail(node, key, "expected an integer");
    const std::int64_t value = *node->value<std::int64_t>();
    if (value < min || value > max) {
      return fail(node, key, "out of range [" + std::to_string(min) + ", " + std::to_string(max) + "]");
    }
    out = static_cast<T>(value);
    return Ok{};
  }
  // A duration: "10m", "-20s" (when negatives are allowed) or integer milliseconds.
  Status<ScenarioError> duration(std::string_view key, DurationMs& out, bool negative = false) {
    const toml::node* node = get(key);
    if (node == nullptr) return Ok{};
    auto parsed = parse_duration_node(*node, negative);
    if (!parsed) return fail(node, key, "expected a duration such as \"90s\", \"10m\", \"1h\"");
    out = *parsed;
    return Ok{};
  }
  static std::optional<DurationMs> parse_duration_node(const toml::node& node, bool negative) {
    if (node.is_integer()) {
      std::int64_t value = *node.value<std::int64_t>();
      if (value > kDurationMsMax || value < (negative ? -kDurationMsMax : 0)) return std::nullopt;
      return value;
    }
    if (!node.is_string()) return std::nullopt;
    std::string text = *node.value<std::string>();
    bool minus = negative && !text.empty() && text[0] == '-';
    auto parsed = parse_duration(minus ? std::string_view(text).substr(1) : std::string_view(text));
    if (!parsed) return std::nullopt;
    return minus ? -*parsed : *parsed;
  }

  Status<ScenarioError> selector(std::string_view key, Selector& out) {
    const toml::node* node = get(key);
    if (node == nullptr) return Ok{};
    return parse_selector(*node, key, out);
  }
  Status<ScenarioError> parse_selector(const toml::node& node, std::string_view key, Selector& out) const {
    auto add = [&](const toml::node& item) -> Status<ScenarioError> {
      if (!item.is_string()) return fail(&item, key, "expected server ids, country codes or \"*\"");
      std::string text = *item.value<std::string>();
      // Two letters are a country code, in either case ("de" is Germany,
      // never a server id).
      bool country = text.size() == 2 && std::isalpha(static_cast<unsigned char>(text[0])) &&
                     std::isalpha(static_cast<unsigned char>(text[1]));
      if (country) {
        for (char& c : text) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
      }
      if (text == "*") out.all = true;
      else if (country) out.countries.push_back(text);
      else out.servers.push_back(text);
      return Ok{};
    };
    if (const toml::array* items = node.as_array()) {
      for (const toml::node& item : *items) {
        if (auto status = add(item); !status.ok()) return status;
      }
      return Ok{};
    }
    return add(node);
  }

  const toml::table* table(std::string_view key, Status<ScenarioError>& status) {
    const toml::node* node = get(key);
    if (node == nullptr) return nullptr;
    if (!node->is_table()) status = fail(node, key, "expected a table");
    return node->as_table();
  }
  const toml::array* tables(std::string_view key, Status<ScenarioError>& status) {
    const toml::node* node = get(key);
    if (node == nullptr) return nullptr;
    const toml::array* array = node->as_array();
    if (array == nullptr || !array->is_array_of_tables()) {
      status = fail(node, key, "expected an array of tables ([[" + field(key) + "]])");
      return nullptr;
    }
    return array;
  }

 private:
  const toml::table& table_;
  std::string where_;
  const std::string& source_;
  std::set<std::string> used_;
};

#define MESH_TRY(expr)                   \
  do {                                   \
    auto mesh_status_ = (expr);          \
    if (!mesh_status_.ok()) return mesh_status_.error(); \
  } while (0)

std::optional<EventKind> event_kind(std::string_view name) {
  for (int k = 0; k <= static_cast<int>(EventKind::inject_forged); ++k) {
    if (name == to_string(static_cast<EventKind>(k))) return static_cast<EventKind>(k);
  }
  return std::nullopt;
}

std::optional<ExpectKind> expect_kind(std::string_view name) {
  for (int k = 0; k <= static_cast<int>(ExpectKind::rotation_changes_max); ++k) {
    if (name == to_string(static_cast<ExpectKind>(k))) return static_cast<ExpectKind>(k);
  }
  return std::nullopt;
}

std::optional<verdict::ServerStatus> status_of(std::string_view name) {
  using verdict::ServerStatus;
  for (ServerStatus s : {ServerStatus::ok, ServerStatus::no_data, ServerStatus::unreachable,
                         ServerStatus::unavailable}) {
    if (name == verdict::to_string(s)) return s;
  }
  return std::nullopt;
}

Status<ScenarioError> read_link(Reader& r, LinkSpec& link) {
  MESH_TRY(r.integer("loss_permille", link.loss_permille, 0, 1000));
  MESH_TRY(r.duration("latency", link.latency_ms));
  MESH_TRY(r.duration("jitter", link.jitter_ms));
  return Ok{};
}

Status<ScenarioError> read_server(const toml::table& table, const std::string& where,
                                  const std::string& source, ServerSpec& server) {
  Reader r(table, where, source);
  MESH_TRY(r.string("id", server.id));
  MESH_TRY(r.string("country", server.country));
  if (const toml::node* routes = r.get("routes")) {
    const toml::array* items = routes->as_array();
    if (items == nullptr) return r.fail(routes, "routes", "expected an array of route ids");
    for (const toml::node& item : *items) {
      if (!item.is_string()) return r.fail(&item, "routes", "expected route ids (strings)");
      server.routes.push_back(*item.value<std::string>());
    }
  }
  if (server.id.empty() || server.country.empty()) {
    return r.fail(nullptr, "id", "a server needs an id and a country");
  }
  return r.check_unknown();
}

Status<ScenarioError> read_fleet(Reader& top, Scenario& s) {
  Status<ScenarioError> status = Ok{};
  const toml::table* table = top.table("fleet", status);
  MESH_TRY(status);
  if (table == nullptr) return top.fail(nullptr, "fleet", "missing [fleet]");
  Reader r(*table, "fleet", top.source());
  MESH_TRY(r.integer("nodes", s.fleet.generated_nodes, 1, kNodesMax));
  MESH_TRY(r.integer("countries", s.fleet.generated_countries, 1, kCountriesMax));
  if (const toml::array* servers = r.tables("servers", status)) {
    for (const toml::node& node : *servers) {
      ServerSpec server;
      MESH_TRY(read_server(*node.as_table(), "fleet.servers", top.source(), server));
      s.fleet.servers.push_back(std::move(server));
    }
  }
  MESH_TRY(status);
  if (const toml::array* routes = r.tables("routes", status)) {
    for (const toml::node& node : *routes) {
      Reader route(*node.as_table(), "fleet.routes", top.source());
      Route out;
      MESH_TRY(route.string("id", out.id));
      MESH_TRY(route.string("name", out.name));
      if (out.name.empty()) out.name = out.id;
      MESH_TRY(route.check_unknown());
      s.fleet.routes.push_back(std::move(out));
    }
  }
  MESH_TRY(status);
  const bool generated = s.fleet.generated_nodes != 0;
  if (generated == !s.fleet.servers.empty()) {
    return r.fail(table, "nodes", "give either nodes and countries, or [[fleet.servers]]");
  }
  if (generated && s.fleet.generated_countries == 0) {
    return r.fail(table, "countries", "generated fleets need countries (1..20)");
  }
  return r.check_unknown();
}

Status<ScenarioError> read_params(Reader& top, Scenario& s) {
  Status<ScenarioError> status = Ok{};
  const toml::table* table = top.table("params", status);
  MESH_TRY(status);
  if (table == nullptr) return Ok{};
  Reader r(*table, "params", top.source());
  for (const ParameterSpec& spec : parameter_specs()) {
    const toml::node* node = table->get(spec.name);
    if (node == nullptr) continue;
    std::int64_t value = spec.get(s.params);
    auto duration = Reader::parse_duration_node(*node, false);
    if (node->is_integer()) value = *node->value<std::int64_t>();
    else if (std::string_view(spec.name).ends_with("_ms") && duration) value = *duration;
    else return r.fail(node, spec.name, "expected an integer (or a duration for *_ms)");
    r.get(spec.name);
    if (value < spec.min || value > spec.max) {
      return r.fail(node, spec.name, "out of range [" + std::to_string(spec.min) + ", " +
                                         std::to_string(spec.max) + "]");
    }
    spec.set(s.params, value);
  }
  auto valid = validate_parameters(s.params);
  if (!valid.ok()) return make_error(ScenarioError::bad_field, r.at(table) + valid.message());
  return r.check_unknown();
}

Status<ScenarioError> read_sim(Reader& top, Scenario& s) {
  Status<ScenarioError> status = Ok{};
  const toml::table* table = top.table("sim", status);
  MESH_TRY(status);
  if (table == nullptr) return Ok{};
  Reader r(*table, "sim", top.source());
  SimParams& p = s.sim;
  MESH_TRY(r.duration("tick_interval", p.tick_interval_ms));
  MESH_TRY(r.duration("check_interval", p.check_interval_ms));
  MESH_TRY(r.integer("tls_every", p.tls_every, 0, 1'000'000));
  MESH_TRY(r.integer("syn_attempts", p.syn_attempts, 1, 10));
  MESH_TRY(r.duration("probe_timeout", p.probe_timeout_ms));
  MESH_TRY(r.integer("tcp_probe_bytes", p.tcp_probe_bytes, 0, 1'000'000));
  MESH_TRY(r.integer("tls_probe_bytes", p.tls_probe_bytes, 0, 1'000'000));
  if (const toml::node* loss = r.get("gossip_loss")) {
    const std::string name = loss->is_string() ? *loss->value<std::string>() : "";
    if (name == to_string(GossipLoss::stream)) p.gossip_loss = GossipLoss::stream;
    else if (name == to_string(GossipLoss::frames)) p.gossip_loss = GossipLoss::frames;
    else return r.fail(loss, "gossip_loss", "expected \"stream\" (TCP) or \"frames\" (datagrams)");
  }
  MESH_TRY(r.integer("overlay_rings", p.overlay_rings, 1, 32));
  MESH_TRY(r.duration("sync_interval", p.sync_interval_ms));
  MESH_TRY(r.integer("check_nodes", p.check_nodes, 0, kNodesMax));
  MESH_TRY(r.duration("measure_from", p.measure_from_ms));
  if (p.tick_interval_ms < 10 || p.check_interval_ms < 1'000 || p.sync_interval_ms < p.tick_interval_ms ||
      p.probe_timeout_ms < agent::kProbeConnectTimeoutMinMs || p.probe_timeout_ms > 600'000) {
    return r.fail(table, "", "tick_interval >= 10ms, check_interval >= 1s, sync_interval >= tick_interval, "
                             "probe_timeout in 3500ms..10m (as the daemon's connect_timeout_ms)");
  }
  return r.check_unknown();
}

Status<ScenarioError> read_links(Reader& top, Scenario& s) {
  Status<ScenarioError> status = Ok{};
  const toml::table* table = top.table("link", status);
  MESH_TRY(status);
  if (table == nullptr) return Ok{};
  Reader r(*table, "link", top.source());
  MESH_TRY(read_link(r, s.link_defaults));
  if (const toml::array* overrides = r.tables("override", status)) {
    for (const toml::node& node : *overrides) {
      Reader o(*node.as_table(), "link.override", top.source());
      LinkOverride out{{}, {}, s.link_defaults};
      MESH_TRY(o.selector("from", out.from));
      MESH_TRY(o.selector("to", out.to));
      MESH_TRY(read_link(o, out.link));
      MESH_TRY(o.check_unknown());
      s.link_overrides.push_back(std::move(out));
    }
  }
  MESH_TRY(status);
  if (s.link_overrides.size() + 1 >= kLinkOverridesMax) {
    return r.fail(table, "override", "too many overrides");
  }
  return r.check_unknown();
}

Status<ScenarioError> read_event(const toml::table& table, const std::string& source, Event& e) {
  Reader r(table, "event", source);
  e.origin = source + ":" + std::to_string(table.source().begin.line);
  const toml::node* kind_node = r.get("kind");
  if (kind_node == nullptr || !kind_node->is_string()) return r.fail(kind_node, "kind", "expected an event kind");
  auto kind = event_kind(*kind_node->value<std::string>());
  if (!kind) return r.fail(kind_node, "kind", "unknown event kind '" + *kind_node->value<std::string>() + "'");
  e.kind = *kind;
  if (r.get("at") == nullptr) return r.fail(nullptr, "at", "an event needs a time");
  MESH_TRY(r.duration("at", e.at_ms));
  MESH_TRY(r.string("name", e.name));
  MESH_TRY(r.selector("servers", e.servers));
  MESH_TRY(r.selector("from", e.from));
  MESH_TRY(r.selector("to", e.to));
  MESH_TRY(r.boolean("both_directions", e.both_directions));
  MESH_TRY(r.boolean("connections_only", e.connections_only));
  if (const toml::node* port = r.get("port")) {
    const std::string name = port->is_string() ? *port->value<std::string>() : "";
    if (name == "all") e.port = BlockPort::all;
    else if (name == "probe") e.port = BlockPort::probe;
    else if (name == "gossip") e.port = BlockPort::gossip;
    else if (name == "sni") e.port = BlockPort::sni;
    else return r.fail(port, "port", "expected \"all\", \"probe\" (443), \"gossip\" or \"sni\"");
  }
  if (e.kind != EventKind::block && (table.contains("connections_only") || table.contains("port") ||
                                     table.contains("both_directions"))) {
    return r.fail(&table, "kind", "both_directions, connections_only and port belong to a block");
  }
  if (e.kind == EventKind::clock_skew && !table.contains("skew")) {
    return r.fail(&table, "skew", "a clock_skew needs `skew` (for example \"10m\" or \"-90s\")");
  }
  MESH_TRY(r.duration("skew", e.skew_ms, true));
  MESH_TRY(r.integer("tamper_frames", e.tamper_frames, 0, 10'000));
  MESH_TRY(read_link(r, e.link));
  if (const toml::node* groups = r.get("groups")) {
    const toml::array* items = groups->as_array();
    if (items == nullptr) return r.fail(groups, "groups", "expected an array of server lists");
    for (const toml::node& item : *items) {
      Selector group;
      MESH_TRY(r.parse_selector(item, "groups", group));
      e.groups.push_back(std::move(group));
    }
  }
  Status<ScenarioError> status = Ok{};
  if (const toml::array* add = r.tables("add", status)) {
    for (const toml::node& node : *add) {
      ServerSpec server;
      MESH_TRY(read_server(*node.as_table(), "event.add", source, server));
      e.add.push_back(std::move(server));
    }
  }
  MESH_TRY(status);
  const bool needs_servers = e.kind != EventKind::partition && e.kind != EventKind::heal &&
                             e.kind != EventKind::set_link && e.kind != EventKind::roster_add &&
                             e.kind != EventKind::inject_forged && e.kind != EventKind::unblock;
  if (needs_servers && e.servers.empty()) return r.fail(&table, "servers", "this event needs servers");
  if (e.kind == EventKind::block && e.from.empty()) return r.fail(&table, "from", "a block needs `from`");
  if (e.kind == EventKind::unblock && e.name.empty() && e.servers.empty()) {
    return r.fail(&table, "name", "unblock needs the block's name or its servers");
  }
  if (e.kind == EventKind::partition && e.groups.empty()) return r.fail(&table, "groups", "a partition needs groups");
  if (e.kind == EventKind::roster_add && e.add.empty()) return r.fail(&table, "add", "roster_add needs [[event.add]]");
  if (e.kind == EventKind::set_link && (e.from.empty() || e.to.empty())) {
    return r.fail(&table, "from", "set_link needs `from` and `to`");
  }
  return r.check_unknown();
}

Status<ScenarioError> read_expect(const toml::table& table, const std::string& source,
                                  DurationMs duration, Expectation& e) {
  Reader r(table, "expect", source);
  e.origin = source + ":" + std::to_string(table.source().begin.line);
  const toml::node* kind_node = r.get("kind");
  if (kind_node == nullptr || !kind_node->is_string()) return r.fail(kind_node, "kind", "expected an expectation kind");
  auto kind = expect_kind(*kind_node->value<std::string>());
  if (!kind) return r.fail(kind_node, "kind", "unknown expectation kind '" + *kind_node->value<std::string>() + "'");
  e.kind = *kind;
  MESH_TRY(r.string("server", e.server));
  MESH_TRY(r.string("route", e.route));
  MESH_TRY(r.string("counter", e.counter));
  if (const toml::node* status = r.get("status")) {
    auto parsed = status->is_string() ? status_of(*status->value<std::string>()) : std::nullopt;
    if (!parsed) return r.fail(status, "status", "expected ok, no_data, unreachable or unavailable");
    e.status = *parsed;
  }
  MESH_TRY(r.duration("at", e.at_ms));
  MESH_TRY(r.duration("from", e.from_ms));
  MESH_TRY(r.duration("to", e.to_ms));
  MESH_TRY(r.duration("since", e.since_ms));
  MESH_TRY(r.duration("lag", e.lag_ms));
  MESH_TRY(r.integer("value", e.value, 0, INT64_MAX));
  MESH_TRY(r.boolean("exclude_server", e.exclude_server));
  MESH_TRY(r.string("node", e.node));
  const bool rotation = e.kind == ExpectKind::in_rotation || e.kind == ExpectKind::out_of_rotation ||
                        e.kind == ExpectKind::rotation_changes_max;
  const bool needs_server = e.kind == ExpectKind::status || e.kind == ExpectKind::status_during ||
                            e.kind == ExpectKind::unreliable || rotation;
  if (needs_server && e.server.empty()) return r.fail(&table, "server", "this expectation needs a server");
  if (rotation && e.route.empty()) {
    return r.fail(&table, "route", "this expectation needs a route");
  }
  if ((e.kind == ExpectKind::counter_at_least || e.kind == ExpectKind::counter_at_most) && e.counter.empty()) {
    return r.fail(&table, "counter", "this expectation needs a counter");
  }
  if (e.kind == ExpectKind::digests_agree && e.to_ms == 0) e.to_ms = e.at_ms + 60'000;
  if ((e.kind == ExpectKind::status_during || e.kind == ExpectKind::digests_agree) &&
      (e.kind == ExpectKind::digests_agree ? e.to_ms < e.at_ms : e.to_ms < e.from_ms)) {
    return r.fail(&table, "to", "the window ends before it starts");
  }
  if (std::max({e.at_ms, e.to_ms, e.from_ms}) > duration) {
    return r.fail(&table, "at", "after the end of the run (" + format_duration(duration) + ")");
  }
  return r.check_unknown();
}

Status<ScenarioError> read_timeline(Reader& top, Scenario& s) {
  Status<ScenarioError> status = Ok{};
  if (const toml::array* events = top.tables("event", status)) {
    if (events->size() > kEventsMax) return top.fail(events, "event", "too many events");
    for (const toml::node& node : *events) {
      Event e;
      MESH_TRY(read_event(*node.as_table(), top.source(), e));
      if (e.at_ms > s.duration_ms) return top.fail(&node, "event.at", "after the end of the run");
      s.events.push_back(std::move(e));
    }
  }
  MESH_TRY(status);
  std::stable_sort(s.events.begin(), s.events.end(),
                   [](const Event& a, const Event& b) { return a.at_ms < b.at_ms; });
  if (const toml::array* expects = top.tables("expect", status)) {
    if (expects->size() > kExpectationsMax) return top.fail(expects, "expect", "too many expectations");
    for (const toml::node& node : *expects) {
      Expectation e;
      MESH_TRY(read_expect(*node.as_table(), top.source(), s.duration_ms, e));
      s.expectations.push_back(std::move(e));
    }
  }
  MESH_TRY(status);
  if (const toml::node* snapshots = top.get("snapshots")) {
    const toml::array* items = snapshots->as_array();
    if (items == nullptr || items->size() > kSnapshotsMax) {
      return top.fail(snapshots, "snapshots", "expected an array of up to 256 times");
    }
    for (const toml::node& item : *items) {
      auto at = Reader::parse_duration_node(item, false);
      if (!at || *at > s.duration_ms) return top.fail(&item, "snapshots", "expected times within the run");
      s.snapshots.push_back(*at);
    }
    std::sort(s.snapshots.begin(), s.snapshots.end());
  }
  return Ok{};
}

Status<ScenarioError> read_scenario(const toml::table& root, const std::string& source, Scenario& s) {
  Reader top(root, "", source);
  MESH_TRY(top.string("name", s.name));
  MESH_TRY(top.integer("seed", s.seed, 0, INT64_MAX));
  MESH_TRY(top.duration("duration", s.duration_ms));
  MESH_TRY(top.integer("start_unix_ms", s.start_unix_ms, 0, 4'102'444'800'000));
  if (s.duration_ms <= 0 || s.duration_ms > kRunDurationMsMax) {
    return top.fail(top.get("duration"), "duration", "must be within (0, 7d]");
  }
  MESH_TRY(read_fleet(top, s));
  MESH_TRY(read_params(top, s));
  MESH_TRY(read_sim(top, s));
  MESH_TRY(read_links(top, s));
  MESH_TRY(read_timeline(top, s));
  return top.check_unknown();
}

}  // namespace

ScenarioResult<Scenario> parse_scenario(std::string_view text, const std::string& source) {
  Scenario scenario;
  scenario.name = source;
  try {
    toml::table root = parse_toml(text, source);
    auto status = read_scenario(root, source, scenario);
    if (!status.ok()) return status.error();
  } catch (const toml::parse_error& error) {
    return make_error(ScenarioError::syntax,
                      source + ":" + std::to_string(error.source().begin.line) + ":" +
                          std::to_string(error.source().begin.column) + ": " +
                          std::string(error.description()));
  }
  return scenario;
}

ScenarioResult<Scenario> load_scenario_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return make_error(ScenarioError::unreadable, path + ": cannot be read");
  std::ostringstream text;
  text << in.rdbuf();
  if (text.str().size() > 4 * 1024 * 1024) {
    return make_error(ScenarioError::unreadable, path + ": larger than 4 MiB");
  }
  return parse_scenario(text.str(), path);
}

}  // namespace mesh::sim

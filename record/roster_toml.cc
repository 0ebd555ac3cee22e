#include "record/roster_toml.h"

#include <set>
#include <string_view>
#include <utility>

#include "common/toml.h"
#include "record/address.h"
#include "record/parameters.h"
#include "record/ports.h"

namespace mesh {
namespace {

using Parsed = Result<Roster, RosterError>;

std::string line_of(const toml::node& node) {
  return "line " + std::to_string(node.source().begin.line);
}

Error<RosterError> fail(RosterError code, const toml::node& node, const std::string& what) {
  return make_error(code, "roster file " + line_of(node) + ": " + what);
}

// Refuses any key of `table` not in `allowed` (typos must not pass silently).
Status<RosterError> check_keys(const toml::table& table, const std::set<std::string_view>& allowed,
                               const std::string& where) {
  for (const auto& [key, value] : table) {
    if (allowed.count(key.str()) == 0) {
      return fail(RosterError::malformed, value,
                  "unknown key '" + std::string(key.str()) + "' in " + where);
    }
  }
  return Ok{};
}

Result<std::string, RosterError> get_string(const toml::table& table, std::string_view key,
                                            const std::string& where) {
  const toml::node* node = table.get(key);
  if (node == nullptr) {
    return fail(RosterError::malformed, table, where + ": missing '" + std::string(key) + "'");
  }
  if (!node->is_string()) {
    return fail(RosterError::malformed, *node,
                where + ": '" + std::string(key) + "' must be a string");
  }
  return std::string(node->as_string()->get());
}

Result<Endpoint, RosterError> get_endpoint(const toml::table& table, std::string_view key,
                                           std::uint16_t default_port, const std::string& where) {
  auto text = get_string(table, key, where);
  if (!text) return text.error();
  std::optional<Endpoint> endpoint = parse_endpoint(*text, default_port);
  if (!endpoint) {
    return fail(
        RosterError::bad_address, *table.get(key),
        where + ": " + std::string(key) + " '" + *text +
            "' is not host:port (a DNS name or IP literal, [v6] in brackets, port 1..65535)");
  }
  return *endpoint;
}

// Parameters renamed since roster files could hold them: the error names
// the new key (docs/CONFIG.md, "Roster parameters").
constexpr std::pair<std::string_view, std::string_view> kRenamedParams[] = {
    {"report_interval_ms", "heartbeat_interval_ms"},
};

std::string unknown_param(std::string_view key) {
  std::string message = "unknown key '" + std::string(key) + "' in [params]";
  for (const auto& [old_name, new_name] : kRenamedParams) {
    if (key == old_name) message += " (renamed '" + std::string(new_name) + "')";
  }
  return message;
}

Status<RosterError> read_params(const toml::table& table, Parameters& params) {
  for (const auto& [key, value] : table) {
    const ParameterSpec* spec = nullptr;
    for (const ParameterSpec& s : parameter_specs()) {
      if (key.str() == s.name) spec = &s;
    }
    if (spec == nullptr) {
      return fail(RosterError::malformed, value, unknown_param(key.str()));
    }
    if (!value.is_integer()) {
      return fail(RosterError::malformed, value,
                  "params." + std::string(spec->name) + " must be an integer");
    }
    std::int64_t v = value.as_integer()->get();
    if (v < spec->min || v > spec->max) {
      return fail(RosterError::bad_parameter, value,
                  "params." + std::string(spec->name) + ": " + std::to_string(v) + " is outside " +
                      std::to_string(spec->min) + ".." + std::to_string(spec->max));
    }
    spec->set(params, v);
  }
  return Ok{};
}

Result<Route, RosterError> read_route(const toml::table& table, std::size_t index) {
  std::string where = "[[routes]] #" + std::to_string(index + 1);
  if (auto status = check_keys(table, {"id", "name"}, where); !status) return status.error();
  auto id = get_string(table, "id", where);
  if (!id) return id.error();
  auto name = get_string(table, "name", where);
  if (!name) return name.error();
  return Route{std::move(*id), std::move(*name)};
}

Result<std::vector<std::string>, RosterError> read_route_list(const toml::table& table,
                                                              const std::string& where) {
  const toml::node* node = table.get("routes");
  if (node == nullptr) return fail(RosterError::malformed, table, where + ": missing 'routes'");
  const toml::array* array = node->as_array();
  if (array == nullptr)
    return fail(RosterError::malformed, *node, where + ": 'routes' must be an array");
  std::vector<std::string> routes;
  for (const toml::node& item : *array) {
    if (!item.is_string())
      return fail(RosterError::malformed, item, where + ": route ids must be strings");
    routes.emplace_back(item.as_string()->get());
  }
  return routes;
}

Result<ServerEntry, RosterError> read_server(const toml::table& table, std::size_t index) {
  std::string where = "[[servers]] #" + std::to_string(index + 1);
  if (auto status =
          check_keys(table, {"id", "country", "probe", "sni", "gossip", "key", "routes"}, where);
      !status) {
    return status.error();
  }
  ServerEntry server;
  auto id = get_string(table, "id", where);
  if (!id) return id.error();
  server.id = std::move(*id);
  where = "server '" + server.id + "'";
  auto country = get_string(table, "country", where);
  if (!country) return country.error();
  server.country = std::move(*country);
  auto probe = get_endpoint(table, "probe", kDefaultProbePort, where);
  if (!probe) return probe.error();
  server.probe = std::move(*probe);
  auto sni = get_string(table, "sni", where);
  if (!sni) return sni.error();
  server.sni = std::move(*sni);
  auto gossip = get_endpoint(table, "gossip", kDefaultGossipPort, where);
  if (!gossip) return gossip.error();
  server.gossip = std::move(*gossip);
  auto key_hex = get_string(table, "key", where);
  if (!key_hex) return key_hex.error();
  auto key = public_key_from_hex(*key_hex);
  if (!key)
    return fail(RosterError::malformed, *table.get("key"),
                where + ": key must be 64 hex characters");
  server.key = *key;
  auto routes = read_route_list(table, where);
  if (!routes) return routes.error();
  server.routes = std::move(*routes);
  return server;
}

// Reads `[[name]]` into `out` with `read_one`.
template <class T, class Reader>
Status<RosterError> read_tables(const toml::table& root, std::string_view name, Reader read_one,
                                std::vector<T>& out) {
  const toml::node* node = root.get(name);
  if (node == nullptr) return Ok{};
  const toml::array* array = node->as_array();
  if (array == nullptr) {
    return fail(RosterError::malformed, *node,
                "'" + std::string(name) + "' must be [[" + std::string(name) + "]] tables");
  }
  for (std::size_t i = 0; i < array->size(); ++i) {
    const toml::table* table = (*array)[i].as_table();
    if (table == nullptr)
      return fail(RosterError::malformed, (*array)[i],
                  std::string(name) + " entries must be tables");
    auto item = read_one(*table, i);
    if (!item) return item.error();
    out.push_back(std::move(*item));
  }
  return Ok{};
}

Status<RosterError> read_version(const toml::table& root, std::uint64_t override_or_0,
                                 Roster& roster) {
  const toml::node* node = root.get("version");
  if (override_or_0 != 0) {
    roster.version = override_or_0;
  } else if (node == nullptr) {
    return make_error(RosterError::malformed, "roster file: missing top-level 'version'");
  }
  if (node != nullptr && (!node->is_integer() || node->as_integer()->get() < 1)) {
    return fail(RosterError::malformed, *node, "version must be an integer >= 1");
  }
  if (override_or_0 == 0) roster.version = static_cast<std::uint64_t>(node->as_integer()->get());
  return Ok{};
}

Parsed read_roster(const toml::table& root, std::uint64_t override_or_0) {
  if (auto s = check_keys(root, {"version", "params", "routes", "servers"}, "the top level"); !s)
    return s.error();
  Roster roster;
  if (auto s = read_version(root, override_or_0, roster); !s) return s.error();
  if (const toml::node* params = root.get("params")) {
    if (!params->is_table())
      return fail(RosterError::malformed, *params, "'params' must be a table");
    if (auto s = read_params(*params->as_table(), roster.params); !s) return s.error();
  }
  if (auto s = read_tables(root, "routes", read_route, roster.routes); !s) return s.error();
  if (auto s = read_tables(root, "servers", read_server, roster.servers); !s) return s.error();
  if (auto s = validate_roster(roster); !s) return s.error();
  return roster;
}

}  // namespace

std::string toml_quoted(std::string_view text) {
  std::string out = "\"";
  for (char c : text) {
    auto b = static_cast<unsigned char>(c);
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (b < 0x20 || b == 0x7f) {
      char escape[8];
      std::snprintf(escape, sizeof escape, "\\u%04x", b);
      out += escape;
    } else {
      out += c;
    }
  }
  return out + "\"";
}

Result<Roster, RosterError> roster_from_toml(std::string_view text,
                                             std::uint64_t version_override_or_0) {
  if (text.size() > kRosterTomlBytesMax) {
    return make_error(RosterError::too_large,
                      "roster file: over " + std::to_string(kRosterTomlBytesMax) + " bytes");
  }
  try {
    toml::table root = parse_toml(text);
    return read_roster(root, version_override_or_0);
  } catch (const toml::parse_error& error) {
    return make_error(RosterError::malformed, "roster file line " +
                                                  std::to_string(error.source().begin.line) + ": " +
                                                  std::string(error.description()));
  }
}

std::string roster_to_toml(const Roster& roster) {
  std::string out =
      "# meshnode roster (docs/CONFIG.md)\nversion = " + std::to_string(roster.version) +
      "\n\n[params]\n";
  for (const ParameterSpec& spec : parameter_specs()) {
    out += std::string(spec.name) + " = " + std::to_string(spec.get(roster.params)) + "\n";
  }
  for (const Route& route : roster.routes) {
    out += "\n[[routes]]\nid = " + toml_quoted(route.id) + "\nname = " + toml_quoted(route.name) + "\n";
  }
  for (const ServerEntry& s : roster.servers) {
    out += "\n[[servers]]\nid = " + toml_quoted(s.id) + "\ncountry = " + toml_quoted(s.country) +
           "\nprobe = " + toml_quoted(format_endpoint(s.probe)) + "\nsni = " + toml_quoted(s.sni) +
           "\ngossip = " + toml_quoted(format_endpoint(s.gossip)) +
           "\nkey = " + toml_quoted(public_key_to_hex(s.key)) + "\nroutes = [";
    for (std::size_t i = 0; i < s.routes.size(); ++i) out += (i ? ", " : "") + toml_quoted(s.routes[i]);
    out += "]\n";
  }
  return out;
}

}  // namespace mesh

#include "node/api/router.h"

#include <algorithm>
#include <charconv>
#include <map>
#include <span>

#include <nlohmann/json.hpp>

#include "node/api/metrics_text.h"
#include "node/api/page.h"
#include "node/api/render.h"
#include "common/server_id.h"
#include "record/country.h"
#include "record/envelope.h"

namespace mesh::api {
namespace {

using Json = nlohmann::json;

struct Target {
  std::string path;
  std::map<std::string, std::string> query;
  std::string repeated;  // the first query parameter given twice, if any
};

int hex_value(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// Percent-decoding; nullopt for a broken escape or a decoded NUL.
std::optional<std::string> decode(std::string_view text) {
  std::string out;
  for (std::size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '+') {
      out += ' ';
    } else if (text[i] != '%') {
      out += text[i];
    } else {
      if (i + 2 >= text.size()) return std::nullopt;
      const int high = hex_value(text[i + 1]), low = hex_value(text[i + 2]);
      if (high < 0 || low < 0 || (high == 0 && low == 0)) return std::nullopt;
      out += static_cast<char>(high * 16 + low);
      i += 2;
    }
  }
  return out;
}

std::optional<Target> parse_target(std::string_view target) {
  Target out;
  const auto question = target.find('?');
  auto path = decode(target.substr(0, question));
  if (!path || path->empty() || path->front() != '/') return std::nullopt;
  out.path = std::move(*path);
  if (question == std::string_view::npos) return out;
  std::string_view query = target.substr(question + 1);
  while (!query.empty()) {
    const auto amp = query.find('&');
    const std::string_view pair = query.substr(0, amp);
    query = amp == std::string_view::npos ? std::string_view{} : query.substr(amp + 1);
    if (pair.empty()) continue;
    const auto eq = pair.find('=');
    auto key = decode(pair.substr(0, eq));
    auto value = decode(eq == std::string_view::npos ? "" : pair.substr(eq + 1));
    if (!key || !value) return std::nullopt;
    if (!out.query.emplace(*key, std::move(*value)).second && out.repeated.empty()) out.repeated = *key;
  }
  return out;
}

std::optional<std::uint64_t> parse_uint(std::string_view text) {
  std::uint64_t value = 0;
  auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (error != std::errc{} || end != text.data() + text.size() || text.empty()) return std::nullopt;
  return value;
}

// "500ms", "30s", "5m", "1h", or a number of seconds; cut to kWaitMaxMs.
std::optional<DurationMs> parse_wait(std::string_view text) {
  DurationMs unit = 1'000;
  if (text.ends_with("ms")) {
    unit = 1;
    text.remove_suffix(2);
  } else if (!text.empty() && (text.back() == 's' || text.back() == 'm' || text.back() == 'h')) {
    unit = text.back() == 's' ? 1'000 : text.back() == 'm' ? 60'000 : 3'600'000;
    text.remove_suffix(1);
  }
  auto value = parse_uint(text);
  if (!value) return std::nullopt;
  if (*value > static_cast<std::uint64_t>(kWaitMaxMs)) return kWaitMaxMs;
  return std::min<DurationMs>(static_cast<DurationMs>(*value) * unit, kWaitMaxMs);
}

ApiResponse json_response(std::string body, const ApiSnapshot& snapshot) {
  ApiResponse response;
  response.body = std::move(body);
  response.headers.emplace_back("X-Meshnode-Index", std::to_string(snapshot.index));
  response.headers.emplace_back("X-Meshnode-Snapshot-Ms", std::to_string(snapshot.taken_ms));
  response.headers.emplace_back("X-Meshnode-Starting", snapshot.starting ? "true" : "false");
  return response;
}

// 200 {"status": "ok"}, or 503 with every problem that stands.
ApiResponse health(const ApiSnapshot& snapshot) {
  ApiResponse response;
  if (snapshot.problems.empty()) {
    response.body = R"({"status":"ok"})";
    return response;
  }
  Json problems = Json::array();
  for (const HealthProblem& problem : snapshot.problems) {
    problems.push_back({{"problem", problem.code}, {"message", problem.message}});
  }
  response.status = 503;
  response.body = Json{{"status", "unhealthy"}, {"problems", std::move(problems)}}.dump(
      -1, ' ', false, Json::error_handler_t::replace);
  return response;
}

ApiResponse json_response(std::shared_ptr<const SharedBody> body, const ApiSnapshot& snapshot) {
  ApiResponse response = json_response(std::string(), snapshot);
  response.shared_body = std::move(body);
  return response;
}

ApiResponse no_roster_yet() {
  return error_response(503, "no_roster", "this node holds no roster or no verdict yet");
}

bool ready(const ApiSnapshot& snapshot) { return snapshot.roster && snapshot.evaluation; }

// GET /v1/servers with filters; unfiltered it is the cached body.
ApiResponse list_servers(const Target& target, const ApiSnapshot& snapshot) {
  const auto status = target.query.find("status");
  const auto country = target.query.find("country");
  const auto route = target.query.find("route");
  if (status != target.query.end() && status->second != "ok" && status->second != "unavailable" &&
      status->second != "unreachable" && status->second != "no_data") {
    return error_response(400, "bad_request", "status must be ok, unavailable, unreachable or no_data");
  }
  if (country != target.query.end() && !is_iso3166_alpha2(country->second)) {
    return error_response(400, "bad_request",
                          "country must be an assigned ISO 3166-1 alpha-2 code in upper case, like DE");
  }
  if (route != target.query.end() && !is_valid_server_id(route->second)) {
    return error_response(400, "bad_request",
                          "route must be a route id: 1 to 64 of a-z, 0-9, '.', '_' and '-', first a letter or digit");
  }
  if (status == target.query.end() && country == target.query.end() && route == target.query.end()) {
    return json_response(servers_body(snapshot), snapshot);
  }
  Json out = Json::array();
  for (const ServerState& server : snapshot.servers) {
    if (status != target.query.end() && verdict::to_string(server.verdict->status) != status->second) continue;
    if (country != target.query.end() && server.entry->country != country->second) continue;
    if (route != target.query.end() &&
        std::find(server.entry->routes.begin(), server.entry->routes.end(), route->second) ==
            server.entry->routes.end()) {
      continue;
    }
    out.push_back(server_json(snapshot, server));
  }
  return json_response(out.dump(), snapshot);
}

// GET /v1/routes: the global answer (the cached body), or with ?country=
// the rotation for users in that country (docs/VERDICTS.md, "Rotation per
// user country").
ApiResponse list_routes(const Target& target, const ApiSnapshot& snapshot) {
  const auto country = target.query.find("country");
  if (country == target.query.end()) return json_response(routes_body(snapshot), snapshot);
  if (!is_iso3166_alpha2(country->second)) {
    return error_response(400, "bad_request",
                          "country must be an assigned ISO 3166-1 alpha-2 code in upper case, like DE");
  }
  return json_response(country_routes_json(snapshot, country->second).dump(), snapshot);
}

ApiResponse one_route(std::string_view id, const ApiSnapshot& snapshot) {
  for (std::size_t i = 0; i < snapshot.roster->routes.size(); ++i) {
    if (snapshot.roster->routes[i].id != id) continue;
    Json out = route_json(snapshot, i);
    Json members = Json::array();
    for (const ServerState& server : snapshot.servers) {
      const auto& routes = server.entry->routes;
      if (std::find(routes.begin(), routes.end(), id) != routes.end()) {
        members.push_back(server_json(snapshot, server));
      }
    }
    out["members"] = std::move(members);
    return json_response(out.dump(), snapshot);
  }
  return error_response(404, "not_found", "no route '" + std::string(id) + "'");
}

ApiResponse one_server(std::string_view id, const ApiSnapshot& snapshot) {
  const ServerState* server = snapshot.server(id);
  if (server == nullptr) return error_response(404, "not_found", "no server '" + std::string(id) + "'");
  return json_response(server_detail_json(snapshot, *server).dump(), snapshot);
}

// The endpoints: path pattern, method, the role needed (nullopt: none),
// the query parameters accepted.
struct Endpoint {
  std::string_view prefix;  // exact path, or a prefix ending in '/' for /{id}
  bool has_id;
  std::string_view method;
  std::optional<Role> role;
  std::span<const std::string_view> params;
};
constexpr std::string_view kBlocking[] = {"index", "wait"};
constexpr std::string_view kRouteFilters[] = {"country", "index", "wait"};
constexpr std::string_view kServerFilters[] = {"status", "country", "route", "index", "wait"};
constexpr Endpoint kEndpoints[] = {
    {"/", false, "GET", std::nullopt, {}},
    {"/healthz", false, "GET", std::nullopt, {}},
    {"/metrics", false, "GET", Role::read, {}},
    {"/v1/routes", false, "GET", Role::read, kRouteFilters},
    {"/v1/routes/", true, "GET", Role::read, kBlocking},
    {"/v1/servers", false, "GET", Role::read, kServerFilters},
    {"/v1/servers/", true, "GET", Role::read, kBlocking},
    {"/v1/mesh", false, "GET", Role::read, kBlocking},
    {"/v1/mesh/records", false, "GET", Role::read, kBlocking},
    {"/v1/roster", false, "PUT", Role::admin, {}},
};

// 400 for a query parameter the endpoint does not take, or one given twice.
std::optional<ApiResponse> check_query(const Target& target, const Endpoint& endpoint) {
  std::string accepted;
  for (std::string_view name : endpoint.params) accepted += (accepted.empty() ? "" : ", ") + std::string(name);
  const std::string path = endpoint.has_id ? std::string(endpoint.prefix) + "{id}" : std::string(endpoint.prefix);
  for (const auto& [name, value] : target.query) {
    if (std::find(endpoint.params.begin(), endpoint.params.end(), name) != endpoint.params.end()) continue;
    return error_response(400, "bad_request",
                          "unknown query parameter '" + name + "': " + path +
                              (accepted.empty() ? " takes none" : " takes " + accepted));
  }
  if (!target.repeated.empty()) {
    return error_response(400, "bad_request", "query parameter '" + target.repeated + "' given twice");
  }
  if (target.query.count("wait") && !target.query.count("index")) {
    return error_response(400, "bad_request", "wait is given with index only (?index=N&wait=30s)");
  }
  return std::nullopt;
}

const Endpoint* match(const std::string& path, std::string& id) {
  for (const Endpoint& endpoint : kEndpoints) {
    if (!endpoint.has_id && path == endpoint.prefix) return &endpoint;
    if (endpoint.has_id && path.starts_with(endpoint.prefix) && path.size() > endpoint.prefix.size() &&
        path.find('/', endpoint.prefix.size()) == std::string::npos) {
      id = path.substr(endpoint.prefix.size());
      return &endpoint;
    }
  }
  return nullptr;
}

std::optional<RouteDecision> check_auth(const ApiRequest& request, const TokenSet& tokens, Role needed) {
  RouteDecision decision;
  constexpr std::string_view kBearer = "Bearer ";
  std::string_view header = request.authorization;
  std::optional<Role> role;
  if (header.size() > kBearer.size() && header.substr(0, kBearer.size()) == kBearer) {
    role = tokens.role_of(header.substr(kBearer.size()));
  }
  if (!role) {
    decision.response = error_response(401, "unauthorized", "a valid bearer token is required");
    decision.response.headers.emplace_back("WWW-Authenticate", "Bearer");
    return decision;
  }
  if (needed == Role::admin && *role != Role::admin) {
    decision.response = error_response(403, "forbidden", "this needs an admin token");
    return decision;
  }
  return std::nullopt;
}

}  // namespace

ApiResponse error_response(unsigned status, std::string_view code, std::string_view message) {
  ApiResponse response;
  response.status = status;
  // Messages may echo the client's bytes (a path, an id): invalid UTF-8 is
  // replaced (U+FFFD), not thrown on (found by tests/fuzz/api_request_fuzz).
  response.body = Json{{"error", code}, {"message", message}}.dump(-1, ' ', false,
                                                                  Json::error_handler_t::replace);
  return response;
}

ApiResponse roster_accepted(std::uint64_t version, std::size_t servers) {
  ApiResponse response;
  response.body = Json{{"roster_version", version}, {"servers", servers}}.dump();
  return response;
}

ApiResponse roster_refused(bool not_newer, std::string_view message) {
  return not_newer ? error_response(409, "not_newer", message)
                   : error_response(400, "invalid_roster", message);
}

RouteDecision route(const ApiRequest& request, const ApiSnapshot& snapshot, const TokenSet& tokens,
                    bool held, const ApiServerStats& server) {
  RouteDecision decision;
  auto target = parse_target(request.target);
  if (!target) {
    decision.response = error_response(400, "bad_request", "the request target does not parse");
    return decision;
  }
  std::string id;
  const Endpoint* endpoint = match(target->path, id);
  if (endpoint == nullptr) {
    decision.response = error_response(404, "not_found", "no such endpoint: " + target->path);
    return decision;
  }
  if (request.method != endpoint->method) {
    decision.response = error_response(405, "method_not_allowed",
                                       target->path + " takes " + std::string(endpoint->method));
    decision.response.headers.emplace_back("Allow", std::string(endpoint->method));
    return decision;
  }
  if (request.authorization_repeated) {
    // Which one would count is anybody's guess: neither does.
    decision.response = error_response(400, "bad_request", "more than one Authorization header");
    return decision;
  }
  if (endpoint->role) {
    if (auto refused = check_auth(request, tokens, *endpoint->role)) return *refused;
  }
  if (auto refused = check_query(*target, *endpoint)) {
    decision.response = std::move(*refused);
    return decision;
  }
  const std::string_view path = endpoint->prefix;
  if (path == "/") {
    decision.response.content_type = "text/html; charset=utf-8";
    decision.response.body = std::string(status_page_html());
    decision.response.headers = {{"Content-Security-Policy", std::string(status_page_csp())},
                                 {"X-Frame-Options", "DENY"},
                                 {"Referrer-Policy", "no-referrer"}};
    return decision;
  }
  if (path == "/healthz") {
    decision.response = health(snapshot);
    return decision;
  }
  if (path == "/metrics") {
    decision.response.content_type = "text/plain; version=0.0.4; charset=utf-8";
    decision.response.body = render_metrics(snapshot, server);
    return decision;
  }
  if (path == "/v1/roster") {
    if (request.body.empty()) {
      decision.response = roster_refused(false, "the body must be a signed roster record");
      return decision;
    }
    decision.kind = RouteDecision::Kind::offer_roster;
    decision.roster = request.body;
    return decision;
  }
  // A blocking query holds until the index moves.
  if (auto index = target->query.find("index"); index != target->query.end() && !held) {
    auto wanted = parse_uint(index->second);
    auto wait = target->query.count("wait") ? parse_wait(target->query.at("wait"))
                                            : std::optional<DurationMs>(kWaitMaxMs);
    if (!wanted || !wait) {
      decision.response = error_response(400, "bad_request", "index must be a number, wait a duration (30s, 500ms, 5m)");
      return decision;
    }
    if (*wanted == snapshot.index && *wait > 0) {
      decision.kind = RouteDecision::Kind::wait;
      decision.index = *wanted;
      decision.wait_ms = *wait;
      return decision;
    }
  }
  if (path == "/v1/mesh") {
    decision.response = json_response(mesh_json(snapshot).dump(), snapshot);
    return decision;
  }
  if (path == "/v1/mesh/records") {
    decision.response = json_response(held_records_json(snapshot).dump(), snapshot);
    return decision;
  }
  if (!ready(snapshot)) {
    decision.response = no_roster_yet();
    return decision;
  }
  if (path == "/v1/routes") decision.response = list_routes(*target, snapshot);
  else if (path == "/v1/routes/") decision.response = one_route(id, snapshot);
  else if (path == "/v1/servers") decision.response = list_servers(*target, snapshot);
  else decision.response = one_server(id, snapshot);
  return decision;
}

}  // namespace mesh::api

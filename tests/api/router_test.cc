// The router as a pure function (node/api/router.h): every endpoint's
// fields and types (the contract of docs/API.md), authentication, filters,
// blocking queries, 404, 405 and bad requests, with no socket.
#include <doctest/doctest.h>

#include <nlohmann/json.hpp>
#include <sodium.h>

#include "node/api/router.h"
#include "tests/api/fixture.h"

namespace mesh::api::testing {
namespace {

using Json = nlohmann::json;

RouteDecision get(const std::string& target, const std::string& token = kReadToken,
                  const ApiSnapshot* snap = nullptr) {
  static const auto fixed = snapshot();
  return route(ApiRequest{"GET", target, token.empty() ? "" : "Bearer " + token, ""},
               snap != nullptr ? *snap : *fixed, tokens());
}

Json body_of(const RouteDecision& decision) {
  REQUIRE(decision.kind == RouteDecision::Kind::respond);
  return Json::parse(decision.response.text());
}

std::string header(const ApiResponse& response, const std::string& name) {
  for (const auto& [key, value] : response.headers) {
    if (key == name) return value;
  }
  return "";
}

void check_server_fields(const Json& s) {
  CHECK(s["id"].is_string());
  CHECK(s["country"].is_string());
  CHECK(s["routes"].is_array());
  CHECK(s["status"].is_string());
  CHECK(s["caption"].is_string());
  CHECK(s["flags"].is_array());
  CHECK(s["witnesses"]["failing"].is_number_unsigned());
  CHECK(s["witnesses"]["eligible"].is_number_unsigned());
  CHECK(s["witnesses"]["by_country"].is_object());
  for (const char* count : {"quorum", "discarded", "explained"}) {
    CAPTURE(count);
    CHECK(s["witnesses"][count].is_number_unsigned());
  }
  CHECK((s["last_report_age_s"].is_number_integer() || s["last_report_age_s"].is_null()));
  CHECK(s["metrics_stale"].is_boolean());
}

TEST_CASE("GET /v1/routes: servers in rotation in roster order, with the index header") {
  const auto decision = get("/v1/routes");
  CHECK(decision.response.status == 200);
  CHECK(header(decision.response, "X-Meshnode-Index") == "7");
  CHECK(header(decision.response, "X-Meshnode-Snapshot-Ms") == "1700000100000");
  const Json routes = body_of(decision);
  REQUIRE(routes.size() == 2);
  CHECK(routes[0] == Json{{"id", "eu"}, {"name", "Europe"}, {"servers", {"de-1", "de-2", "nl-2"}},
                          {"degraded", false}, {"reason", ""}});
  CHECK(routes[1]["servers"] == Json{"nl-2"});
}

TEST_CASE("GET /v1/routes?country=: the rotation for users in that country") {
  // nl-1 is unreachable from DE (DE 2/2) while NL's witness reaches it.
  const auto nl = get("/v1/routes?country=NL");
  CHECK(nl.response.status == 200);
  CHECK(header(nl.response, "X-Meshnode-Index") == "7");
  const Json routes = body_of(nl);
  REQUIRE(routes.size() == 2);
  CHECK(routes[0] == Json{{"id", "eu"}, {"name", "Europe"}, {"country", "NL"},
                          {"servers", {"de-1", "de-2", "nl-1", "nl-2"}}, {"degraded", false}, {"reason", ""}});
  CHECK(routes[1]["servers"] == Json{"nl-1", "nl-2"});
  CHECK(body_of(get("/v1/routes?country=DE"))[0]["servers"] == Json{"de-1", "de-2", "nl-2"});
  // A country with no witnesses: the global answer.
  CHECK(body_of(get("/v1/routes?country=US"))[0]["servers"] == Json{"de-1", "de-2", "nl-2"});
  for (const char* bad : {"?country=de", "?country=XX", "?country=", "?country=DEU"}) {
    CAPTURE(bad);
    CHECK(get(std::string("/v1/routes") + bad).response.status == 400);
  }
  CHECK(body_of(get("/v1/routes?nope=1"))["message"] ==
        "unknown query parameter 'nope': /v1/routes takes country, index, wait");
}

TEST_CASE("GET /v1/routes/{id}: the route plus its members") {
  const Json route = body_of(get("/v1/routes/nl"));
  CHECK(route["id"] == "nl");
  REQUIRE(route["members"].size() == 2);
  CHECK(route["members"][0]["id"] == "nl-1");
  for (const auto& member : route["members"]) check_server_fields(member);
  CHECK(get("/v1/routes/asia").response.status == 404);
}

TEST_CASE("GET /v1/servers: every field of the contract, captions as the product words them") {
  const Json servers = body_of(get("/v1/servers"));
  REQUIRE(servers.size() == 4);
  for (const auto& s : servers) check_server_fields(s);
  const Json& blocked = servers[2];
  CHECK(blocked["status"] == "unreachable");
  CHECK(blocked["caption"] == "Unreachable from your servers (2 of 3 servers can't see it)");
  CHECK(blocked["flags"] == Json{"unreachable"});
  CHECK(blocked["witnesses"]["by_country"]["DE"] == Json{{"failing", 2}, {"eligible", 2}});
  CHECK(blocked["last_report_age_s"] == 12);
  const Json& silent = servers[3];
  CHECK(silent["caption"] == "No data from server");
  CHECK(silent["last_report_age_s"].is_null());
  CHECK(silent["metrics_stale"] == true);
}

TEST_CASE("GET /v1/servers filters by status, country and route, together") {
  CHECK(body_of(get("/v1/servers?status=ok")).size() == 2);
  CHECK(body_of(get("/v1/servers?country=NL")).size() == 2);
  CHECK(body_of(get("/v1/servers?route=nl&status=no_data")).size() == 1);
  CHECK(body_of(get("/v1/servers?country=FR")).empty());
  CHECK(get("/v1/servers?status=bad").response.status == 400);
}

TEST_CASE("GET /v1/servers/{id}: metrics, self-check and each observer's ladder") {
  const Json server = body_of(get("/v1/servers/nl-1"));
  check_server_fields(server);
  CHECK(server["metrics"]["cpu_permille"] == 230);
  CHECK(server["self_check"] == Json{{"listener_ok", true}, {"service_ok", true}, {"reason", ""}});
  REQUIRE(server["observers"].size() == 3);
  const Json& ip_block = server["observers"][0];
  CHECK(ip_block["last_reason"] == "tcp_timeout");
  CHECK(ip_block["stages"] == Json{{"tcp", "failed"}, {"tls", "not_reached"}});
  CHECK(ip_block["streak"] == Json{{"failing", 4}, {"ok", 0}});
  CHECK(ip_block["last_probe_age_s"] == 3);
  CHECK(server["observers"][1]["stages"] == Json{{"tcp", "ok"}, {"tls", "failed"}});
  CHECK(server["observers"][2]["unreliable"] == true);
  CHECK(server["observers"][2]["recovered"] == true);
  CHECK(ip_block["recovered"] == false);
  const Json silent = body_of(get("/v1/servers/nl-2"));
  CHECK(silent["metrics"].is_null());
  CHECK(silent["self_check"].is_null());
  CHECK(get("/v1/servers/xx-9").response.status == 404);
}

TEST_CASE("GET /v1/mesh: node, roster, digest, records, partition, clock, peers, volume") {
  const Json mesh = body_of(get("/v1/mesh"));
  CHECK(mesh["node"] == "de-1");
  CHECK(mesh["roster_version"] == 3);
  CHECK(mesh["digest"].get<std::string>().size() == 64);
  CHECK(mesh["records"] == 4);
  CHECK(mesh["peers"][0] == Json{{"id", "de-2"}, {"connected", true}, {"last_frame_age_s", 2}});
  CHECK(mesh["peers"][1]["last_frame_age_s"].is_null());
  CHECK(mesh["volume"] == Json{{"used_today", 1000}, {"cap", 209715200}, {"tight", false}});
  CHECK(mesh["partitioned"].is_boolean());
  CHECK(mesh["clock"] == Json{{"suspect", "none"}, {"offset_ms", 0}});
}

TEST_CASE("GET /v1/mesh/records: every held record with its seq and fingerprint") {
  const Json held = body_of(get("/v1/mesh/records"));
  REQUIRE(held.size() == 2);
  CHECK(held[0] == Json{{"kind", "roster"}, {"origin", "operator"}, {"seq", 3},
                        {"signed_ms", 1'700'000'000'000}, {"fingerprint", "5be1c0a2"}});
  CHECK(held[1]["origin"] == "de-1");
  CHECK(held[1]["fingerprint"] == "09f3aa71");
  CHECK(get("/v1/mesh/records", "").response.status == 401);
  CHECK(get("/v1/mesh/records/x").response.status == 404);
}

TEST_CASE("a path that is not UTF-8 gets its 404, not an exception") {
  // The 404 message echoes the path; nlohmann::json throws on invalid
  // UTF-8 unless told to replace it (found by the api_request fuzz target).
  const auto decision = get("/v1/servers/\xff\xfe");
  REQUIRE(decision.response.status == 404);
  const Json body = Json::parse(decision.response.text());
  CHECK(body["error"] == "not_found");
  CHECK(body["message"].get<std::string>().find("\xef\xbf\xbd") != std::string::npos);
}

TEST_CASE("no token, a bad token, a read token on an admin endpoint") {
  const auto none = get("/v1/routes", "");
  CHECK(none.response.status == 401);
  CHECK(header(none.response, "WWW-Authenticate") == "Bearer");
  CHECK(Json::parse(none.response.text())["error"] == "unauthorized");
  CHECK(get("/v1/routes", "wrong").response.status == 401);
  CHECK(route(ApiRequest{"GET", "/v1/routes", "Basic abc", ""}, *snapshot(), tokens()).response.status == 401);
  const auto forbidden = route(ApiRequest{"PUT", "/v1/roster", std::string("Bearer ") + kReadToken, "x"},
                               *snapshot(), tokens());
  CHECK(forbidden.response.status == 403);
  const auto admin = route(ApiRequest{"PUT", "/v1/roster", std::string("Bearer ") + kAdminToken, "raw"},
                           *snapshot(), tokens());
  CHECK(admin.kind == RouteDecision::Kind::offer_roster);
  CHECK(admin.roster == "raw");
  CHECK(get("/v1/routes", kAdminToken).response.status == 200);  // admin reads too
}

TEST_CASE("/healthz needs no token; / is the page; /metrics is Prometheus text") {
  CHECK(get("/healthz", "").response.status == 200);
  const auto page = get("/", "");
  CHECK(page.response.content_type.starts_with("text/html"));
  CHECK(page.response.text().find("<html") != std::string::npos);
  const auto metrics = get("/metrics");
  CHECK(metrics.response.content_type.starts_with("text/plain; version=0.0.4"));
  CHECK(metrics.response.text().find("meshnode_build_info{version=\"0.1.0\"} 1") != std::string::npos);
  CHECK(metrics.response.text().find("meshnode_servers{status=\"unreachable\"} 1") != std::string::npos);
  CHECK(get("/metrics", "").response.status == 401);
}

TEST_CASE("/healthz answers 503 with every problem that stands, and /metrics has the gauges") {
  auto sick = snapshot();
  sick->problems = {{"roster_file_refused", "roster file '/etc/meshnode/roster.signed' refused (damaged): ..."},
                    {"key_mismatch", "the roster lists server 'de-1' with key aa.., but this node's key file holds bb.."}};
  const auto health = get("/healthz", "", sick.get());
  CHECK(health.response.status == 503);
  const Json body = Json::parse(health.response.text());
  CHECK(body["status"] == "unhealthy");
  REQUIRE(body["problems"].size() == 2);
  CHECK(body["problems"][0]["problem"] == "roster_file_refused");
  CHECK(body["problems"][0]["message"].get<std::string>().starts_with("roster file '/etc/meshnode/roster.signed'"));
  CHECK(body["problems"][1]["problem"] == "key_mismatch");
  const std::string metrics(get("/metrics", kReadToken, sick.get()).response.text());
  CHECK(metrics.find("meshnode_healthy 0\n") != std::string::npos);
  CHECK(metrics.find("meshnode_problem{problem=\"roster_file_refused\"} 1\n") != std::string::npos);
  CHECK(metrics.find("meshnode_problem{problem=\"key_mismatch\"} 1\n") != std::string::npos);
  CHECK(metrics.find("meshnode_problem{problem=\"not_in_roster\"} 0\n") != std::string::npos);
  const std::string fine(get("/metrics").response.text());
  CHECK(fine.find("meshnode_healthy 1\n") != std::string::npos);
  CHECK(Json::parse(get("/healthz", "").response.text()) == Json{{"status", "ok"}});
}

TEST_CASE("/metrics: routes in rotation and degraded, peers connected, partitioned, roster version") {
  auto s = snapshot();
  auto evaluation = std::make_shared<verdict::Evaluation>(*s->evaluation);
  evaluation->routes[1] = {"nl", {"nl-1"}, true, "no server in rotation (0 unavailable, 1 unreachable)"};
  evaluation->partitioned = true;
  s->evaluation = evaluation;
  for (std::size_t i = 0; i < s->servers.size(); ++i) s->servers[i].verdict = &evaluation->servers[i];
  const std::string metrics(get("/metrics", kReadToken, s.get()).response.text());
  for (const char* line : {"meshnode_route_servers_in_rotation{route=\"eu\"} 3\n",
                           "meshnode_route_servers{route=\"eu\"} 4\n",
                           "meshnode_route_degraded{route=\"eu\"} 0\n",
                           "meshnode_route_servers_in_rotation{route=\"nl\"} 1\n",
                           "meshnode_route_servers{route=\"nl\"} 2\n",
                           "meshnode_route_degraded{route=\"nl\"} 1\n",
                           "meshnode_peers 2\n", "meshnode_peers_connected 1\n", "meshnode_partitioned 1\n",
                           "meshnode_roster_version 3\n", "meshnode_starting 0\n"}) {
    CHECK_MESSAGE(metrics.find(line) != std::string::npos, line);
  }
  // Before a roster: the families, no samples.
  ApiSnapshot empty;
  const std::string none(get("/metrics", kReadToken, &empty).response.text());
  CHECK(none.find("# TYPE meshnode_route_degraded gauge") != std::string::npos);
  CHECK(none.find("meshnode_route_degraded{") == std::string::npos);
}

TEST_CASE("every answer with an index says whether the node has just started") {
  auto s = snapshot();
  CHECK(header(get("/v1/routes", kReadToken, s.get()).response, "X-Meshnode-Starting") == "false");
  s->starting = true;
  s->started_ms = s->taken_ms - 2'000;
  const auto routes = get("/v1/routes", kReadToken, s.get());
  CHECK(routes.response.status == 200);
  CHECK(header(routes.response, "X-Meshnode-Starting") == "true");
  const Json mesh = body_of(get("/v1/mesh", kReadToken, s.get()));
  CHECK(mesh["starting"] == true);
  CHECK(mesh["started_ms"] == s->taken_ms - 2'000);
}

TEST_CASE("unknown paths 404, wrong methods 405 with Allow, bad targets 400") {
  CHECK(get("/v2/routes").response.status == 404);
  CHECK(get("/v1/servers/a/b").response.status == 404);
  const auto post = route(ApiRequest{"POST", "/v1/routes", std::string("Bearer ") + kReadToken, ""},
                          *snapshot(), tokens());
  CHECK(post.response.status == 405);
  CHECK(header(post.response, "Allow") == "GET");
  CHECK(get("/v1/servers?status=%zz").response.status == 400);
  CHECK(get("relative").response.status == 400);
  CHECK(get("/v1/servers/nl%2D1").response.status == 200);  // percent-decoded
}

TEST_CASE("a query parameter the endpoint does not take, or given twice, is a 400 naming what it takes") {
  const auto unknown = get("/v1/servers?nope=1");
  CHECK(unknown.response.status == 400);
  CHECK(body_of(unknown)["error"] == "bad_request");
  CHECK(body_of(unknown)["message"] ==
        "unknown query parameter 'nope': /v1/servers takes status, country, route, index, wait");
  CHECK(body_of(get("/v1/servers/nl-1?status=ok"))["message"] ==
        "unknown query parameter 'status': /v1/servers/{id} takes index, wait");
  CHECK(body_of(get("/healthz?verbose=1", ""))["message"] ==
        "unknown query parameter 'verbose': /healthz takes none");
  CHECK(get("/?x=1", "").response.status == 400);
  CHECK(get("/metrics?name=x").response.status == 400);
  CHECK(get("/v1/mesh/records?index=7&wait=0s").response.status == 200);
  // The token first: without one, the endpoint says nothing of its parameters.
  CHECK(get("/v1/servers?nope=1", "").response.status == 401);
  const auto twice = get("/v1/servers?status=ok&status=no_data");
  CHECK(twice.response.status == 400);
  CHECK(body_of(twice)["message"] == "query parameter 'status' given twice");
  CHECK(get("/v1/routes?wait=30s").response.status == 400);  // wait without index
}

TEST_CASE("filters must be what a roster can hold: a country code, a route id") {
  for (const char* bad : {"?country=%FF", "?country=de", "?country=XX", "?country=", "?country=DEU",
                          "?route=EU", "?route=", "?route=%FF", "?route=-eu"}) {
    CAPTURE(bad);
    const auto refused = get(std::string("/v1/servers") + bad);
    CHECK(refused.response.status == 400);
    CHECK(body_of(refused)["error"] == "bad_request");
  }
  CHECK(body_of(get("/v1/servers?country=%FF"))["message"].get<std::string>().find("ISO 3166-1 alpha-2") !=
        std::string::npos);
  CHECK(body_of(get("/v1/servers?country=NL")).size() == 2);
  CHECK(body_of(get("/v1/servers?country=FR")).empty());  // valid, no server there
  CHECK(body_of(get("/v1/servers?route=nl")).size() == 2);
}

TEST_CASE("two Authorization headers are a 400, whatever they say") {
  ApiRequest request{"GET", "/v1/routes", std::string("Bearer ") + kReadToken, ""};
  request.authorization_repeated = true;
  const auto refused = route(request, *snapshot(), tokens());
  CHECK(refused.response.status == 400);
  CHECK(body_of(refused)["message"] == "more than one Authorization header");
  request.target = "/healthz";
  CHECK(route(request, *snapshot(), tokens()).response.status == 400);
}

TEST_CASE("GET / says what the page may load and that no page may frame it") {
  const auto page = get("/", "");
  REQUIRE(page.response.status == 200);
  CHECK(header(page.response, "X-Frame-Options") == "DENY");
  CHECK(header(page.response, "Referrer-Policy") == "no-referrer");
  const std::string policy = header(page.response, "Content-Security-Policy");
  CHECK(policy.starts_with("default-src 'none'; "));
  CHECK(policy.find("frame-ancestors 'none'") != std::string::npos);
  CHECK(policy.find("connect-src 'self'") != std::string::npos);
  CHECK(policy.find("unsafe-inline") == std::string::npos);
  // The script it allows is the page's own, by its SHA-256.
  const std::string html(page.response.text());
  const auto from = html.find("<script>") + 8;
  const std::string script = html.substr(from, html.find("</script>") - from);
  unsigned char digest[crypto_hash_sha256_BYTES];
  crypto_hash_sha256(digest, reinterpret_cast<const unsigned char*>(script.data()), script.size());
  char base64[sodium_base64_ENCODED_LEN(crypto_hash_sha256_BYTES, sodium_base64_VARIANT_ORIGINAL)];
  sodium_bin2base64(base64, sizeof base64, digest, sizeof digest, sodium_base64_VARIANT_ORIGINAL);
  CHECK(policy.find("script-src 'sha256-" + std::string(base64) + "'") != std::string::npos);
  // The JSON endpoints carry no page policy.
  CHECK(header(get("/v1/routes").response, "Content-Security-Policy").empty());
}

TEST_CASE("a blocking query waits while the index is unchanged, answers at once otherwise") {
  const auto wait = get("/v1/routes?index=7&wait=30s");
  CHECK(wait.kind == RouteDecision::Kind::wait);
  CHECK(wait.index == 7);
  CHECK(wait.wait_ms == 30'000);
  CHECK(get("/v1/routes?index=6&wait=30s").kind == RouteDecision::Kind::respond);
  CHECK(get("/v1/routes?index=7&wait=1h").wait_ms == kWaitMaxMs);
  CHECK(get("/v1/routes?index=7").wait_ms == kWaitMaxMs);
  CHECK(get("/v1/routes?index=x").response.status == 400);
  const auto held = route(ApiRequest{"GET", "/v1/routes?index=7", std::string("Bearer ") + kReadToken, ""},
                          *snapshot(), tokens(), true);
  CHECK(held.kind == RouteDecision::Kind::respond);
}

TEST_CASE("before a roster and a verdict, the node says so") {
  ApiSnapshot empty;
  empty.node = "x";
  CHECK(get("/v1/routes", kReadToken, &empty).response.status == 503);
  CHECK(get("/v1/mesh", kReadToken, &empty).response.status == 200);
}

TEST_CASE("tokens: hashes only, a role each, strict lines, constant-time lookup") {
  const TokenSet set = tokens();
  CHECK(set.role_of(kReadToken) == Role::read);
  CHECK(set.role_of(kAdminToken) == Role::admin);
  CHECK(!set.role_of("nope"));
  CHECK(!set.role_of(""));
  CHECK(!set.role_of(std::string(kTokenBytesMax + 1, 'a')));
  CHECK(token_hash_hex("abc") == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  for (const char* bad : {"reader abc", "read 1234", "admin", "read " /* no hash */}) {
    auto parsed = TokenSet::parse(bad, "t");
    CHECK(!parsed.ok());
    CHECK(parsed.message().find("t line 1") != std::string::npos);
  }
  CHECK(TokenSet::parse("# nothing\n\n", "t").code() == TokenError::empty);
}

}  // namespace
}  // namespace mesh::api::testing

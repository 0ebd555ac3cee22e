// meshctl against live daemons' APIs (README.md, "meshctl"; docs/API.md): a
// real fleet of three where one node's VPN service is stopped, read with
// `meshctl status|routes|server|mesh --api`, as JSON and as golden text
// lines; the same answers from a node's store (--data); every failure of
// the API path with its exit code and message: a refused token, an unknown
// server, nothing listening, and HTTPS with a self-signed certificate.
#include <doctest/doctest.h>

#include <fstream>
#include <sstream>

#include <nlohmann/json.hpp>

#include "tests/node/daemon_fleet.h"
#include "tests/tools/output_lines.h"
#include "tests/tools/run_process.h"

namespace mesh::test {
namespace {

using std::chrono::seconds;
using Json = nlohmann::json;

const std::string kMeshctl = MESHNODE_BINARY_DIR "/tools/meshctl/meshctl";

ProcessResult meshctl(std::vector<std::string> args) {
  args.insert(args.begin(), kMeshctl);
  return run_process(args);
}

std::string url(const DaemonFleet& fleet, std::uint32_t i, const char* scheme = "http") {
  return std::string(scheme) + "://" + fleet.address(i) + ":" + std::to_string(fleet.api_port());
}

std::string write_token(const DaemonFleet& fleet, const std::string& name, const std::string& token) {
  const std::string path = fleet.dir() + "/" + name;
  std::ofstream(path) << token << "\n# the rest of the file is ignored\n";
  return path;
}

// `command` of node i's API with the fleet's read token; extra arguments after.
ProcessResult api(const DaemonFleet& fleet, std::uint32_t i, std::vector<std::string> command) {
  const std::string token = write_token(fleet, "read.token", fleet.read_token());
  for (const std::string& arg : {std::string("--api"), url(fleet, i), std::string("--token-file"), token}) {
    command.push_back(arg);
  }
  return meshctl(command);
}

// n3's service stopped and every node showing it unavailable, n1 and n2 ok,
// and both of n3's witnesses eligible: n3's own report makes it unavailable
// before n1's and n2's reports on it arrive, and the checks need both
// observers. With `n1_cacert`, n1 serves HTTPS only: read it over https,
// trusting that certificate.
void converge_with_n3_unavailable(DaemonFleet& fleet, const std::string& n1_cacert = "") {
  fleet.start_all();
  fleet.stop_service(2);
  const std::string token = write_token(fleet, "read.token", fleet.read_token());
  auto status_json = [&](std::uint32_t i) {
    if (i == 0 && !n1_cacert.empty()) {
      return meshctl({"status", "--json", "--api", url(fleet, 0, "https"), "--token-file", token, "--cacert",
                      n1_cacert});
    }
    return api(fleet, i, {"status", "--json"});
  };
  REQUIRE_MESSAGE(DaemonFleet::wait([&] {
    for (std::uint32_t i = 0; i < 3; ++i) {
      auto r = status_json(i);
      if (r.exit_code != 0) return false;
      const Json servers = Json::parse(r.out, nullptr, false);
      if (!servers.is_array() || servers.size() != 3 || servers[0]["status"] != "ok" ||
          servers[1]["status"] != "ok" || servers[2]["status"] != "unavailable" ||
          servers[2]["witnesses"]["eligible"] != 2) {
        return false;
      }
    }
    return true;
  }, seconds(60)), "logs in " << fleet.dir());
}

// Whether a mapping of process `pid` is a file whose path ends with `suffix`.
bool maps_file(pid_t pid, const std::string& suffix) {
  std::ifstream maps("/proc/" + std::to_string(pid) + "/maps");
  REQUIRE(maps.is_open());
  for (std::string line; std::getline(maps, line);) {
    if (line.size() >= suffix.size() && line.compare(line.size() - suffix.size(), suffix.size(), suffix) == 0) {
      return true;
    }
  }
  return false;
}

}  // namespace

TEST_CASE("meshctl status, routes, server and mesh against a live node's API") {
  DaemonFleet fleet(3, 61);
  converge_with_n3_unavailable(fleet);
  INFO("logs in " << fleet.dir());

  auto json = api(fleet, 0, {"status", "--json"});
  CHECK(json.exit_code == 0);
  const Json servers = Json::parse(json.out);
  CHECK(servers[2]["id"] == "n3");
  CHECK(servers[2]["caption"] == "Server unavailable");
  CHECK(servers[2]["flags"] == Json::array({"unavailable"}));

  auto table = api(fleet, 0, {"status"});
  CHECK(table.exit_code == 0);
  CHECK(lines(table.out) == std::vector<std::string>{
                                "SERVER  COUNTRY  STATUS       FAILING WITNESSES  CAPTION",
                                "n1      DE       ok           -",
                                "n2      NL       ok           -",
                                "n3      FI       unavailable  -                  Server unavailable"});
  CHECK(table.out.find('\033') == std::string::npos);  // no colour when stdout is not a terminal

  SUBCASE("filters go to the API as its query") {
    auto unavailable = api(fleet, 1, {"status", "--status", "unavailable"});
    CHECK(unavailable.exit_code == 0);
    CHECK(lines(unavailable.out).size() == 2);
    CHECK(has_line(unavailable.out, "n3      FI       unavailable  -                  Server unavailable"));
    auto german = api(fleet, 1, {"status", "--country", "de", "--route", "all"});
    CHECK(lines(german.out) == std::vector<std::string>{
                                   "SERVER  COUNTRY  STATUS  FAILING WITNESSES  CAPTION", "n1      DE       ok      -"});
    auto bad = api(fleet, 1, {"status", "--status", "down"});
    CHECK(bad.exit_code == 2);
    CHECK(bad.err.find("--status must be ok, unavailable, unreachable or no_data") != std::string::npos);
  }
  SUBCASE("routes: n3 is out of rotation") {
    auto routes = api(fleet, 0, {"routes"});
    CHECK(routes.exit_code == 0);
    CHECK(lines(routes.out) == std::vector<std::string>{
                                   "ROUTE  NAME                       DEGRADED  IN ROTATION  REASON",
                                   "all    Every server               no        n1, n2",
                                   "first  The first of each country  no        n1, n2"});
    auto routes_json = api(fleet, 0, {"routes", "--json"});
    CHECK(Json::parse(routes_json.out)[0]["servers"] == Json::array({"n1", "n2"}));
  }
  SUBCASE("server n3: the stopped service, and each observer's streak and stage ladder") {
    auto detail = api(fleet, 0, {"server", "n3"});
    CHECK(detail.exit_code == 0);
    CHECK(has_line(detail.out, "server      n3 (FI), routes all, first"));
    CHECK(has_line(detail.out, "status      unavailable: Server unavailable"));
    CHECK(has_line(detail.out, "flags       unavailable"));
    CHECK(has_line(detail.out, "witnesses   0 of 2 failing (DE 0/1, NL 0/1)"));
    CHECK(starts_a_line(detail.out, "self-check  listener ok, service FAILED"));
    // Columns as wide as their widest cell: deterministic while streaks stay under 1000.
    CHECK(has_line(detail.out, "OBSERVER  COUNTRY  STREAK  LAST REASON  TCP  TLS      LAST PROBE  VOTE"));
    CHECK(starts_a_line(detail.out, "n1        DE       ok "));
    CHECK(starts_a_line(detail.out, "n2        NL       ok "));
    CHECK(detail.out.find("none         ok   unknown") != std::string::npos);
    auto detail_json = api(fleet, 0, {"server", "n3", "--json"});
    const Json n3 = Json::parse(detail_json.out);
    CHECK(n3["self_check"]["service_ok"] == false);
    CHECK(n3["observers"].size() == 2);
    CHECK(n3["observers"][0]["stages"]["tcp"] == "ok");
  }
  SUBCASE("mesh: the node's view") {
    auto mesh = api(fleet, 0, {"mesh"});
    CHECK(mesh.exit_code == 0);
    CHECK(has_line(mesh.out, "node            n1"));
    CHECK(has_line(mesh.out, "roster version  1"));
    CHECK(starts_a_line(mesh.out, "digest          "));
    CHECK(has_line(mesh.out, "PEER  CONNECTED  LAST FRAME"));
    const Json mesh_json = Json::parse(api(fleet, 0, {"mesh", "--json"}).out);
    CHECK(mesh_json["digest"].get<std::string>().size() == 64);
    CHECK(mesh_json["peers"].size() == 2);
  }
  SUBCASE("the store gives the same status and routes as the API") {
    auto from_store = meshctl({"status", "--data", fleet.data_dir(0)});
    CHECK(from_store.exit_code == 0);
    CHECK(from_store.out == table.out);
    auto routes_store = meshctl({"routes", "--data", fleet.data_dir(0)});
    CHECK(routes_store.out == api(fleet, 0, {"routes"}).out);
    auto detail_store = meshctl({"server", "n3", "--data", fleet.data_dir(0)});
    CHECK(has_line(detail_store.out, "status      unavailable: Server unavailable"));
    CHECK(starts_a_line(detail_store.out, "self-check  listener ok, service FAILED"));
    CHECK(starts_a_line(detail_store.out, "n2        NL       ok "));
  }
  SUBCASE("failures: refused token, unknown server, nothing listening, bad options") {
    const std::string bad_token = write_token(fleet, "bad.token", "not-a-token");
    auto refused = meshctl({"status", "--api", url(fleet, 0), "--token-file", bad_token});
    CHECK(refused.exit_code == 2);
    CHECK(refused.err.find(url(fleet, 0) + "/v1/servers: 401: the token is not accepted") != std::string::npos);
    CHECK(refused.out.empty());
    auto unknown = api(fleet, 0, {"server", "nope"});
    CHECK(unknown.exit_code == 2);
    CHECK(unknown.err.find("/v1/servers/nope: 404 no server 'nope'") != std::string::npos);
    auto unknown_store = meshctl({"server", "nope", "--data", fleet.data_dir(0)});
    CHECK(unknown_store.exit_code == 2);
    CHECK(unknown_store.err.find("no server 'nope'") != std::string::npos);
    auto nothing = meshctl({"routes", "--api", "http://" + fleet.address(2) + ":1", "--token-file",
                            write_token(fleet, "read.token", fleet.read_token())});
    CHECK(nothing.exit_code == 2);
    CHECK(nothing.err.find("http://" + fleet.address(2) + ":1/v1/routes: connection refused") != std::string::npos);
    auto both = meshctl({"status", "--data", fleet.data_dir(0), "--api", url(fleet, 0)});
    CHECK(both.exit_code == 2);
    CHECK(both.err.find("not both") != std::string::npos);
    auto no_token = meshctl({"status", "--api", url(fleet, 0)});
    CHECK(no_token.exit_code == 2);
    CHECK(no_token.err.find("--api needs --token-file") != std::string::npos);
  }
}

TEST_CASE("meshctl over HTTPS: the certificate is verified, --cacert trusts it, --insecure says so") {
  DaemonFleet fleet(3, 62);
  const std::string cert = fleet.dir() + "/api-cert.pem", key = fleet.dir() + "/api-key.pem";
  auto made = run_process({"/usr/bin/openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt",
                           "ec_paramgen_curve:P-256", "-nodes", "-days", "2", "-subj", "/CN=meshnode-test",
                           "-addext", "subjectAltName=IP:" + fleet.address(0), "-keyout", key, "-out", cert});
  REQUIRE(made.exit_code == 0);
  // [api] is the config's last table: node 1 serves HTTPS only.
  std::ofstream(fleet.config_path(0), std::ios::app)
      << "tls_cert_file = \"" << cert << "\"\ntls_key_file = \"" << key << "\"\n";
  converge_with_n3_unavailable(fleet, cert);
  INFO("logs in " << fleet.dir());
  const std::string token = write_token(fleet, "read.token", fleet.read_token());
  const std::string https = url(fleet, 0, "https");

  // n1 serves HTTPS and maps OpenSSL. A lean meshnode loads it for its
  // API's HTTPS only (node/api/tls_library.h), so n2 maps none of it; a
  // meshnode linked with it (sanitizer builds) maps it anyway.
  CHECK(maps_file(fleet.daemon_pid(0), "/libssl.so.3"));
  CHECK(maps_file(fleet.daemon_pid(0), "/libcrypto.so.3"));
  CHECK(maps_file(fleet.daemon_pid(1), "/libssl.so.3") == !MESHNODE_OPENSSL_ON_DEMAND);
  CHECK(maps_file(fleet.daemon_pid(1), "/libcrypto.so.3") == !MESHNODE_OPENSSL_ON_DEMAND);

  auto unverified = meshctl({"status", "--api", https, "--token-file", token});
  CHECK(unverified.exit_code == 1);
  CHECK(unverified.err.find(https + "/v1/servers: TLS verification failed: self-signed certificate") !=
        std::string::npos);
  CHECK(unverified.out.empty());

  auto trusted = meshctl({"status", "--api", https, "--token-file", token, "--cacert", cert});
  CHECK(trusted.exit_code == 0);
  CHECK(has_line(trusted.out, "n3      FI       unavailable  -                  Server unavailable"));
  CHECK(trusted.err.empty());

  auto insecure = meshctl({"status", "--api", https, "--token-file", token, "--insecure"});
  CHECK(insecure.exit_code == 0);
  CHECK(insecure.err.find("--insecure: the certificate of " + https + " is NOT verified") != std::string::npos);

  auto plain = meshctl({"status", "--api", url(fleet, 0), "--token-file", token});
  CHECK(plain.exit_code == 2);
  CHECK(plain.err.find("the connection closed before an answer (is the API https://?)") != std::string::npos);

  auto tls_to_plain = meshctl({"status", "--api", url(fleet, 1, "https"), "--token-file", token, "--insecure"});
  CHECK(tls_to_plain.exit_code == 2);
  CHECK(tls_to_plain.err.find("TLS handshake failed") != std::string::npos);

  auto cacert_on_http = meshctl({"status", "--api", url(fleet, 1), "--token-file", token, "--cacert", cert});
  CHECK(cacert_on_http.exit_code == 2);
  CHECK(cacert_on_http.err.find("apply to https:// URLs only") != std::string::npos);
}

TEST_CASE("meshctl roster push: accepted, not newer, refused, and a read token, each its exit code") {
  DaemonFleet fleet(1, 68);
  fleet.start_all();
  INFO("logs in " << fleet.dir());
  const std::string admin = write_token(fleet, "admin.token", fleet.admin_token());
  const std::string read = write_token(fleet, "read.token", fleet.read_token());
  REQUIRE(DaemonFleet::wait([&] { return api(fleet, 0, {"mesh", "--json"}).exit_code == 0; }, seconds(20)));
  Roster next = fleet.roster();
  next.version = 2;
  fleet.write_roster(next);  // the signed file meshctl pushes
  auto push = [&](const std::string& token, const std::string& file) {
    return meshctl({"roster", "push", "--api", url(fleet, 0), "--token-file", token, file});
  };
  auto accepted = push(admin, fleet.roster_path());
  CHECK(accepted.exit_code == 0);
  CHECK(accepted.out == "roster version 2 accepted by " + url(fleet, 0) + " (1 servers); it spreads to every node by gossip\n");
  // The node's next snapshot (within a tick) shows it.
  CHECK(DaemonFleet::wait([&] { return Json::parse(api(fleet, 0, {"mesh", "--json"}).out)["roster_version"] == 2; },
                          seconds(5)));
  auto again = push(admin, fleet.roster_path());
  CHECK(again.exit_code == 1);
  CHECK(again.err.find("409 not newer than the roster the node holds") != std::string::npos);
  next.version = 3;
  fleet.write_roster(next, generate_key_pair().secret_key);
  auto foreign = push(admin, fleet.roster_path());
  CHECK(foreign.exit_code == 1);
  CHECK(foreign.err.find("400 refused") != std::string::npos);
  auto reader = push(read, fleet.roster_path());
  CHECK(reader.exit_code == 2);
  CHECK(reader.err.find("needs an admin token") != std::string::npos);
  auto nowhere = push(admin, fleet.dir() + "/nowhere.signed");
  CHECK(nowhere.exit_code == 2);
  CHECK(nowhere.err.find("nowhere.signed") != std::string::npos);
}

}  // namespace mesh::test

// The Grafana dashboard in the repository (dashboards/meshnode.json) parses,
// is the shape Grafana imports, and queries only metrics the daemon exports:
// every meshnode_* name in a panel's query is a family of /metrics as
// render_metrics writes it (a histogram's _bucket, _sum and _count count as
// its family). A metric renamed in the daemon and not in the dashboard, or a
// panel that asks for one that never existed, fails here.
#include <doctest/doctest.h>

#include <fstream>
#include <regex>
#include <set>
#include <sstream>

#include <nlohmann/json.hpp>

#include "node/api/metrics_text.h"
#include "tests/api/fixture.h"

namespace mesh::api::testing {
namespace {

using Json = nlohmann::json;

const std::string kDashboard = MESHNODE_SOURCE_DIR "/dashboards/meshnode.json";

// Every family /metrics declares (`# TYPE name type`), with its type.
std::map<std::string, std::string> exported_families() {
  std::map<std::string, std::string> families;
  std::istringstream lines(render_metrics(*snapshot()));
  for (std::string line; std::getline(lines, line);) {
    if (!line.starts_with("# TYPE ")) continue;
    std::istringstream words(line.substr(7));
    std::string name, type;
    words >> name >> type;
    families[name] = type;
  }
  return families;
}

void collect_queries(const Json& node, std::vector<std::string>& out) {
  if (node.is_object()) {
    for (const auto& [key, value] : node.items()) {
      if (key == "expr" && value.is_string()) out.push_back(value.get<std::string>());
      collect_queries(value, out);
    }
  } else if (node.is_array()) {
    for (const Json& item : node) collect_queries(item, out);
  }
}

// `name` as the family /metrics declares: a histogram's series carry suffixes.
std::string family_of(const std::string& name, const std::map<std::string, std::string>& families) {
  for (const char* suffix : {"_bucket", "_sum", "_count"}) {
    if (!name.ends_with(suffix)) continue;
    const std::string base = name.substr(0, name.size() - std::string(suffix).size());
    auto it = families.find(base);
    if (it != families.end() && it->second == "histogram") return base;
  }
  return name;
}

TEST_CASE("the Grafana dashboard parses and queries only metrics the daemon exports") {
  std::ifstream in(kDashboard);
  REQUIRE_MESSAGE(in.good(), kDashboard);
  const Json dashboard = Json::parse(in, nullptr, false);
  REQUIRE_MESSAGE(!dashboard.is_discarded(), kDashboard << " is not JSON");
  CHECK(dashboard.at("title").is_string());
  CHECK(dashboard.at("uid").is_string());
  REQUIRE(dashboard.at("panels").is_array());
  CHECK(dashboard.at("panels").size() > 10);

  const auto families = exported_families();
  REQUIRE(families.count("meshnode_route_degraded") == 1);
  std::vector<std::string> queries;
  collect_queries(dashboard, queries);
  REQUIRE(queries.size() > 10);
  const std::regex metric_name("meshnode_[a-z0-9_]+");
  std::set<std::string> used;
  for (const std::string& query : queries) {
    bool names_one = false;
    for (auto it = std::sregex_iterator(query.begin(), query.end(), metric_name); it != std::sregex_iterator(); ++it) {
      const std::string name = it->str();
      names_one = true;
      used.insert(family_of(name, families));
      CHECK_MESSAGE(families.count(family_of(name, families)) == 1,
                    "the dashboard queries " << name << ", which /metrics does not export: " << query);
    }
    CHECK_MESSAGE(names_one, "a query that reads no meshnode metric: " << query);
  }
  // The asks are on it: routes, peers, partitioned, roster version, health.
  for (const char* wanted : {"meshnode_route_servers_in_rotation", "meshnode_route_degraded",
                             "meshnode_peers_connected", "meshnode_partitioned", "meshnode_roster_version",
                             "meshnode_healthy", "meshnode_problem"}) {
    CHECK_MESSAGE(used.count(wanted) == 1, "the dashboard has no panel for " << wanted);
  }
}

TEST_CASE("the check finds a metric the daemon does not export") {
  const auto families = exported_families();
  CHECK(families.count(family_of("meshnode_probe_duration_seconds_bucket", families)) == 1);
  CHECK(families.count(family_of("meshnode_servers_total", families)) == 0);
  CHECK(families.count(family_of("meshnode_records_bucket", families)) == 0);  // not a histogram
}

}  // namespace
}  // namespace mesh::api::testing

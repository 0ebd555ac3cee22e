// Scenario files: the documented example parses and runs; every kind of
// bad file is refused with a message naming the line and the field.
#include <doctest/doctest.h>

#include <set>
#include <string>

#include "tools/meshsim/builtin.h"
#include "tools/meshsim/duration.h"
#include "tools/meshsim/fleet_gen.h"
#include "tools/meshsim/scenario_file.h"
#include "tools/meshsim/simulator.h"

namespace mesh::sim {
namespace {

const char* const kMinimal = R"(
duration = "10m"
[fleet]
nodes = 8
countries = 2
)";

Scenario accepted(const std::string& text) {
  auto scenario = parse_scenario(text, "ok.toml");
  REQUIRE_MESSAGE(scenario.ok(), (scenario.ok() ? std::string() : scenario.message()));
  return std::move(scenario.value());
}

std::string refused(const std::string& text, ScenarioError expected) {
  auto scenario = parse_scenario(text, "bad.toml");
  REQUIRE_FALSE(scenario.ok());
  CHECK_MESSAGE(scenario.code() == expected, scenario.message());
  return scenario.message();
}

TEST_CASE("durations") {
  CHECK(parse_duration("90s") == 90'000);
  CHECK(parse_duration("1h30m") == 5'400'000);
  CHECK(parse_duration("250ms") == 250);
  CHECK(parse_duration("0") == 0);
  CHECK_FALSE(parse_duration(""));
  CHECK_FALSE(parse_duration("10"));
  CHECK_FALSE(parse_duration("5y"));
  CHECK_FALSE(parse_duration("m"));
  CHECK_FALSE(parse_duration("999999999999999h"));
  CHECK(format_duration(90'000) == "1m30s");
  CHECK(format_duration(3'600'250) == "1h250ms");
}

TEST_CASE("the documented example parses and meets its expectations") {
  auto scenario = load_scenario_file(std::string(MESHNODE_SOURCE_DIR) + "/scenarios/example.toml");
  REQUIRE_MESSAGE(scenario.ok(), (scenario.ok() ? std::string() : scenario.message()));
  CHECK(scenario->name == "example-ru-block");
  CHECK(scenario->seed == 42);
  CHECK(scenario->fleet.servers.size() == 8);
  CHECK(scenario->link_defaults.loss_permille == 5);
  CHECK(scenario->link_overrides.size() == 1);
  REQUIRE(scenario->events.size() == 2);
  CHECK(scenario->events[0].kind == EventKind::block);
  CHECK(scenario->events[0].from.countries == std::vector<std::string>{"RU"});
  auto result = run_scenario(scenario.value(), {0, "meshsim --scenario-file scenarios/example.toml"});
  REQUIRE(result.ok());
  for (const ExpectationResult& e : result->expectations) CHECK_MESSAGE(e.passed, e.text << ": " << e.detail);
}

TEST_CASE("a minimal generated fleet parses with defaults") {
  auto scenario = parse_scenario(kMinimal, "min.toml");
  REQUIRE(scenario.ok());
  CHECK(scenario->fleet.generated_nodes == 8);
  CHECK(scenario->duration_ms == 600'000);
  CHECK(scenario->params == Parameters{});
}

TEST_CASE("a generated fleet spans up to 64 countries, in a file or a built-in") {
  auto countries_of = [](const Scenario& scenario) {
    auto world = build_world(scenario);
    REQUIRE_MESSAGE(world.ok(), (world.ok() ? std::string() : world.message()));
    std::set<std::string> countries;
    for (const SimServer& server : world->servers) countries.insert(server.spec.country);
    return countries.size();
  };
  CHECK(countries_of(accepted("duration = \"10m\"\n[fleet]\nnodes = 256\ncountries = 64\n")) == 64);
  CHECK(refused("duration = \"10m\"\n[fleet]\nnodes = 260\ncountries = 65\n", ScenarioError::bad_field)
            .find("fleet.countries") != std::string::npos);

  auto thirty = builtin_scenario("dissemination", {1000, 30, 1, {}});
  REQUIRE_MESSAGE(thirty.ok(), (thirty.ok() ? std::string() : thirty.message()));
  CHECK(countries_of(thirty.value()) == 30);
  auto too_many = builtin_scenario("dissemination", {1000, 65, 1, {}});
  REQUIRE_FALSE(too_many.ok());
  CHECK(too_many.message() == "countries must be 2..64");
}

TEST_CASE("syntax errors name the line and column") {
  std::string message = refused("duration = \"10m\"\n[fleet\nnodes = 3\n", ScenarioError::syntax);
  CHECK(message.find("bad.toml:2:") != std::string::npos);
  // A non-ASCII character where TOML allows none (common/toml.h).
  CHECK(refused("duration = \"10m\" é\n", ScenarioError::syntax) ==
        "bad.toml:1:18: a non-ASCII character outside a string or comment");
}

TEST_CASE("unknown fields are refused, naming the field and line") {
  std::string message = refused(std::string(kMinimal) + "[sim]\ntick_intervall = \"1s\"\n",
                                ScenarioError::unknown_field);
  CHECK(message.find("sim.tick_intervall") != std::string::npos);
  CHECK(message.find("bad.toml:7") != std::string::npos);
}

TEST_CASE("wrong types and ranges name the field") {
  CHECK(refused(std::string(kMinimal) + "[params]\nfail_streak = \"three\"\n", ScenarioError::bad_field)
            .find("params.fail_streak") != std::string::npos);
  CHECK(refused(std::string(kMinimal) + "[params]\nfail_streak = 0\n", ScenarioError::bad_field)
            .find("out of range") != std::string::npos);
  CHECK(refused(std::string(kMinimal) + "[link]\nloss_permille = 1001\n", ScenarioError::bad_field)
            .find("link.loss_permille") != std::string::npos);
  CHECK(refused("duration = \"ten minutes\"\n[fleet]\nnodes = 8\ncountries = 2\n", ScenarioError::bad_field)
            .find("bad.toml:1: duration") != std::string::npos);
  // No prober's connect deadline is under 3.5 s (the daemon's connect_timeout_ms):
  // the agent reads a timed-out failure as begun at least that long before.
  CHECK(refused(std::string(kMinimal) + "[sim]\nprobe_timeout = \"3s\"\n", ScenarioError::bad_field)
            .find("probe_timeout in 3500ms..10m") != std::string::npos);
}

TEST_CASE("bad events and expectations") {
  const std::string base = kMinimal;
  CHECK(refused(base + "[[event]]\nat = \"1m\"\nkind = \"explode\"\nservers = [\"de-1\"]\n",
                ScenarioError::bad_field).find("unknown event kind 'explode'") != std::string::npos);
  CHECK(refused(base + "[[event]]\nkind = \"heal\"\n", ScenarioError::bad_field)
            .find("event.at") != std::string::npos);
  CHECK(refused(base + "[[event]]\nat = \"1m\"\nkind = \"block\"\nservers = [\"de-1\"]\n",
                ScenarioError::bad_field).find("event.from") != std::string::npos);
  CHECK(refused(base + "[[event]]\nat = \"20m\"\nkind = \"heal\"\n", ScenarioError::bad_field)
            .find("after the end of the run") != std::string::npos);
  CHECK(refused(base + "[[expect]]\nkind = \"status\"\nstatus = \"fine\"\nserver = \"de-1\"\n",
                ScenarioError::bad_field).find("expect.status") != std::string::npos);
  CHECK(refused(base + "[[expect]]\nkind = \"status\"\nat = \"5m\"\n", ScenarioError::bad_field)
            .find("expect.server") != std::string::npos);
}

TEST_CASE("a fleet needs servers or counts, not both") {
  refused("duration = \"10m\"\n[fleet]\nnodes = 8\ncountries = 2\n[[fleet.servers]]\nid = \"a-1\"\ncountry = \"DE\"\n",
          ScenarioError::bad_field);
  refused("duration = \"10m\"\n", ScenarioError::bad_field);
}

TEST_CASE("unknown servers are refused when the world is built") {
  auto scenario = parse_scenario(std::string(kMinimal) +
                                     "[[event]]\nat = \"1m\"\nkind = \"service_down\"\nservers = [\"zz-9\"]\n",
                                 "bad.toml");
  REQUIRE(scenario.ok());
  auto result = run_scenario(scenario.value());
  REQUIRE_FALSE(result.ok());
  CHECK(result.code() == ScenarioError::invalid);
  CHECK(result.message().find("unknown server 'zz-9'") != std::string::npos);
  CHECK(result.message().find("bad.toml:6: event 1 (service_down)") != std::string::npos);

  auto expecting = parse_scenario(std::string(kMinimal) +
                                      "[[expect]]\nkind = \"status\"\nserver = \"zz-8\"\nat = \"5m\"\n",
                                  "bad.toml");
  REQUIRE(expecting.ok());
  auto refused_expect = run_scenario(expecting.value());
  REQUIRE_FALSE(refused_expect.ok());
  CHECK(refused_expect.message().find("bad.toml:6: expectation") != std::string::npos);

  auto at_node = parse_scenario(std::string(kMinimal) +
                                    "[[expect]]\nkind = \"status\"\nserver = \"de-1\"\nnode = \"zz-7\"\nat = \"5m\"\n",
                                "bad.toml");
  REQUIRE(at_node.ok());
  auto refused_node = run_scenario(at_node.value());
  REQUIRE_FALSE(refused_node.ok());
  CHECK(refused_node.code() == ScenarioError::invalid);
  CHECK(refused_node.message().find("bad.toml:6: expectation") != std::string::npos);
  CHECK(refused_node.message().find("unknown node 'zz-7'") != std::string::npos);
}

TEST_CASE("a cross-field parameter error names the line once") {
  const std::string message =
      refused(std::string(kMinimal) + "[params]\nstale_after_ms = \"30s\"\n", ScenarioError::bad_field);
  CHECK(message.find("bad.toml:6: ") == 0);
  CHECK(message.find("params.:") == std::string::npos);
  CHECK(message.find("stale_after_ms") != std::string::npos);
}

TEST_CASE("a clock_skew needs its skew; block options belong to blocks") {
  const std::string skew = std::string(kMinimal) + "[[event]]\nat = \"1m\"\nkind = \"clock_skew\"\nservers = [\"*\"]\n";
  CHECK(refused(skew, ScenarioError::bad_field).find("bad.toml:6: event.skew") != std::string::npos);
  const std::string port = std::string(kMinimal) +
                           "[[event]]\nat = \"1m\"\nkind = \"service_down\"\nservers = [\"*\"]\nport = \"probe\"\n";
  CHECK(refused(port, ScenarioError::bad_field).find("belong to a block") != std::string::npos);
  const std::string bad_port = std::string(kMinimal) +
                               "[[event]]\nat = \"1m\"\nkind = \"block\"\nservers = [\"*\"]\nfrom = [\"DE\"]\nport = \"udp\"\n";
  const std::string bad_port_message = refused(bad_port, ScenarioError::bad_field);
  CHECK(bad_port_message.find("bad.toml:11: event.port") != std::string::npos);
  // The message lists every port a block takes, the SNI block included.
  for (const char* name : {"\"all\"", "\"probe\" (443)", "\"gossip\"", "\"sni\""}) {
    CAPTURE(name);
    CHECK(bad_port_message.find(name) != std::string::npos);
  }
}

TEST_CASE("a block with port = \"sni\" parses as the SNI block") {
  const Scenario scenario = accepted(std::string(kMinimal) +
                                     "[[event]]\nat = \"1m\"\nkind = \"block\"\n"
                                     "servers = [\"nl\"]\nfrom = [\"RU\"]\nport = \"sni\"\n");
  CHECK(scenario.events.at(0).port == BlockPort::sni);
}

TEST_CASE("gossip_loss: TCP streams by default, datagram frames on request, nothing else") {
  CHECK(accepted(std::string(kMinimal)).sim.gossip_loss == GossipLoss::stream);
  CHECK(accepted(std::string(kMinimal) + "[sim]\ngossip_loss = \"frames\"\n").sim.gossip_loss ==
        GossipLoss::frames);
  const std::string message =
      refused(std::string(kMinimal) + "[sim]\ngossip_loss = \"udp\"\n", ScenarioError::bad_field);
  CHECK(message.find("sim.gossip_loss") != std::string::npos);
  CHECK(message.find("bad.toml:") != std::string::npos);
  CHECK(refused(std::string(kMinimal) + "[sim]\ngossip_loss = 1\n", ScenarioError::bad_field)
            .find("sim.gossip_loss") != std::string::npos);
}

TEST_CASE("two letters are a country code in either case; blocks read their options") {
  const Scenario scenario = accepted(std::string(kMinimal) +
                                     "[[event]]\nat = \"1m\"\nkind = \"block\"\nservers = [\"nl\"]\n"
                                     "from = [\"de\", \"RU\"]\nconnections_only = true\nport = \"gossip\"\n");
  const Event& block = scenario.events.at(0);
  CHECK(block.servers.countries == std::vector<std::string>{"NL"});
  CHECK(block.servers.servers.empty());
  CHECK(block.from.countries == std::vector<std::string>{"DE", "RU"});
  CHECK(block.connections_only);
  CHECK(block.port == BlockPort::gossip);
}

TEST_CASE("unreadable files") {
  auto scenario = load_scenario_file("/nonexistent/scenario.toml");
  REQUIRE_FALSE(scenario.ok());
  CHECK(scenario.code() == ScenarioError::unreadable);
}

}  // namespace
}  // namespace mesh::sim

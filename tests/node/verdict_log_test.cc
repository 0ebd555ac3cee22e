// The daemon's log lines: one per transition (node/verdict_log.h), and the
// JSON form (node/log.h) a log shipper reads without a parser of its own.
#include <doctest/doctest.h>

#include <nlohmann/json.hpp>

#include "node/log.h"
#include "node/verdict_log.h"

namespace mesh::node {
namespace {

verdict::Evaluation fleet_of(verdict::ServerStatus b_status, std::vector<ServerId> members) {
  verdict::Evaluation evaluation;
  evaluation.roster_version = 4;
  verdict::ServerVerdict a;
  a.id = "a";
  verdict::ServerVerdict b;
  b.id = "b";
  b.status = b_status;
  if (b_status == verdict::ServerStatus::unreachable) {
    b.caption = verdict::unreachable_caption(3, 5);
    b.failing = 3;
    b.eligible = 5;
    b.by_country = {{"RU", 3, 3, 0}, {"DE", 0, 2, 0}};
  }
  evaluation.servers = {a, b};
  evaluation.routes = {{"eu", std::move(members), false, ""}};
  return evaluation;
}

TEST_CASE("one line per server and route that changed; nothing when nothing did") {
  const auto ok = fleet_of(verdict::ServerStatus::ok, {"a", "b"});
  const auto blocked = fleet_of(verdict::ServerStatus::unreachable, {"a"});
  auto lines = verdict_transitions(&ok, blocked);
  REQUIRE(lines.size() == 2);
  CHECK(lines[0].event == "verdict");
  CHECK(lines[0].level == LogLevel::warn);
  CHECK(lines[0].message ==
        "b: ok -> unreachable: Unreachable from your servers (3 of 5 servers can't see it); "
        "failing witnesses by country: RU 3/3");
  CHECK(lines[1].event == "route");
  CHECK(lines[1].message == "route eu: in rotation a (was a, b)");
  CHECK(verdict_transitions(&blocked, blocked).empty());
  auto healed = verdict_transitions(&blocked, ok);
  REQUIRE(healed.size() == 2);
  CHECK(healed[0].level == LogLevel::info);
  CHECK(healed[0].message == "b: unreachable -> ok");
}

TEST_CASE("the first snapshot reports what is not ok, and a summary") {
  const auto blocked = fleet_of(verdict::ServerStatus::unreachable, {"a"});
  auto lines = verdict_transitions(nullptr, blocked);
  REQUIRE(lines.size() == 2);
  CHECK(lines[0].message.starts_with("b: unknown -> unreachable"));
  CHECK(lines[1].message == "roster version 4: 2 servers, 1 ok");
}

TEST_CASE("an observer found unreliable, then trusted again") {
  auto before = fleet_of(verdict::ServerStatus::ok, {"a", "b"});
  auto after = before;
  after.unreliable_observers = {"a"};
  auto lines = verdict_transitions(&before, after);
  REQUIRE(lines.size() == 1);
  CHECK(lines[0].event == "unreliable_observer");
  CHECK(verdict_transitions(&after, before).at(0).message == "a: its votes count again");
}

TEST_CASE("a JSON log line is one object with the event's fields, whatever the text holds") {
  const std::string line = json_event_line("2026-12-01T00:00:00.000Z", LogLevel::warn, "verdict",
                                           "b: \"quoted\"\nnext", {{"server", "b"}, {"to", "no_data"}});
  auto parsed = nlohmann::json::parse(line);
  CHECK(parsed["level"] == "warn");
  CHECK(parsed["event"] == "verdict");
  CHECK(parsed["msg"] == "b: \"quoted\"\nnext");
  CHECK(parsed["server"] == "b");
  CHECK(parsed["to"] == "no_data");
  CHECK(line.find('\n') == std::string::npos);
}

}  // namespace
}  // namespace mesh::node

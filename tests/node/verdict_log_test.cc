// The daemon's log lines: one per transition (node/verdict_log.h), and the
// JSON form (node/log.h) a log shipper reads without a parser of its own.
#include <doctest/doctest.h>

#include <set>

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

// A node that has just started has heard from nobody: every server is
// no_data, and a line per server (a warning each, 9 on every start of a
// 9-server fleet) would be noise. The summary counts them instead.
TEST_CASE("a start logs no line per server without data, only the summary counting them") {
  auto silent = fleet_of(verdict::ServerStatus::no_data, {"a", "b"});
  silent.servers[0].status = verdict::ServerStatus::no_data;
  auto lines = verdict_transitions(nullptr, silent);
  REQUIRE(lines.size() == 1);
  CHECK(lines[0].level == LogLevel::info);
  CHECK(lines[0].event == "verdicts");
  CHECK(lines[0].message == "roster version 4: 2 servers, 0 ok, 2 without data yet");
  // Later, a server whose reports stop is news again, as a warning.
  const auto ok = fleet_of(verdict::ServerStatus::ok, {"a", "b"});
  auto stopped = verdict_transitions(&ok, fleet_of(verdict::ServerStatus::no_data, {"a", "b"}));
  REQUIRE(stopped.size() == 1);
  CHECK(stopped[0].level == LogLevel::warn);
  CHECK(stopped[0].message.starts_with("b: ok -> no_data"));
}

// After the start, each server's first report flips it no_data -> ok:
// not news either (debug), and one line says when every server has a
// verdict of its own. A server still silent when the start is over is news: a warning.
TEST_CASE("a start's first reports are debug lines and one summary; a server still silent after is a warning") {
  auto silent = fleet_of(verdict::ServerStatus::no_data, {"a", "b"});
  silent.servers[0].status = verdict::ServerStatus::no_data;
  silent.servers[0].caption = silent.servers[1].caption = std::string(verdict::kCaptionNoData);
  std::set<ServerId> unheard;
  verdict_transitions(nullptr, silent, &unheard);
  CHECK(unheard == std::set<ServerId>{"a", "b"});
  auto b_heard = silent;
  b_heard.servers[1].status = verdict::ServerStatus::ok;
  b_heard.servers[1].caption.clear();
  auto lines = verdict_transitions(&silent, b_heard, &unheard);
  REQUIRE(lines.size() == 1);
  CHECK(lines[0].level == LogLevel::debug);
  CHECK(lines[0].message == "b: no_data -> ok");
  CHECK(unheard == std::set<ServerId>{"a"});

  SUBCASE("the last one heard from: one summary line") {
    const auto all_ok = fleet_of(verdict::ServerStatus::ok, {"a", "b"});
    auto last = verdict_transitions(&b_heard, all_ok, &unheard);
    REQUIRE(last.size() == 2);
    CHECK(last[0].level == LogLevel::debug);
    CHECK(last[1].level == LogLevel::info);
    CHECK(last[1].message == "every server judged since the start: 2 servers, 2 ok");
    CHECK(unheard.empty());
    // From then on, a transition is news as always.
    auto later = verdict_transitions(&all_ok, fleet_of(verdict::ServerStatus::unreachable, {"a"}), &unheard);
    REQUIRE(!later.empty());
    CHECK(later[0].level == LogLevel::warn);
  }
  SUBCASE("still silent when the start is over: a warning, once") {
    auto warned = silent_since_start(b_heard, unheard);
    REQUIRE(warned.size() == 1);
    CHECK(warned[0].level == LogLevel::warn);
    CHECK(warned[0].message == "a: no_data: not heard from since this node started: No data from server");
    CHECK(unheard.empty());
    CHECK(silent_since_start(b_heard, unheard).empty());
  }
  SUBCASE("an unheard server that turns up unreachable is a warning at once") {
    auto blocked = b_heard;
    blocked.servers[0].status = verdict::ServerStatus::unreachable;
    auto moved = verdict_transitions(&b_heard, blocked, &unheard);
    REQUIRE(moved.size() == 2);
    CHECK(moved[0].level == LogLevel::warn);
    CHECK(moved[1].message == "every server judged since the start: 2 servers, 1 ok");
    CHECK(unheard.empty());
  }
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

TEST_CASE("JSON log fields keep their types: numbers as numbers, booleans as booleans") {
  const std::string line =
      json_event_line("2026-12-01T00:00:00.000Z", LogLevel::info, "start", "started",
                      {{"boot", std::uint64_t{7}}, {"delta_ms", std::int64_t{-2500}}, {"tls", false},
                       {"node", "n1"}, {"records", std::size_t{12}}});
  auto parsed = nlohmann::json::parse(line);
  CHECK(parsed["boot"].is_number_unsigned());
  CHECK(parsed["boot"] == 7);
  CHECK(parsed["delta_ms"] == -2500);
  CHECK(parsed["tls"].is_boolean());
  CHECK(parsed["tls"] == false);
  CHECK(parsed["node"] == "n1");
  CHECK(parsed["records"] == 12);
  // A verdict line's counts, from the transitions themselves.
  const auto ok = fleet_of(verdict::ServerStatus::ok, {"a", "b"});
  const auto blocked = fleet_of(verdict::ServerStatus::unreachable, {"a"});
  const LogLine verdict = verdict_transitions(&ok, blocked).at(0);
  auto fields = nlohmann::json::parse(json_event_line("t", verdict.level, verdict.event, verdict.message,
                                                      verdict.fields));
  CHECK(fields["failing"] == 3);
  CHECK(fields["eligible"] == 5);
  const LogLine route = verdict_transitions(&ok, blocked).at(1);
  CHECK(nlohmann::json::parse(json_event_line("t", route.level, route.event, route.message,
                                              route.fields))["degraded"] == false);
}

// Text and JSON spell every level as the config does ([log] level): no
// "warning" in one form and "warn" in the other.
TEST_CASE("text and JSON lines spell each level the same way, the config's way") {
  for (LogLevel level : {LogLevel::trace, LogLevel::debug, LogLevel::info, LogLevel::warn, LogLevel::error}) {
    CAPTURE(to_string(level));
    const std::string text = text_event_line("2026-12-01T00:00:00.000Z", level, "verdict", "b: ok -> no_data");
    CHECK(text == "2026-12-01T00:00:00.000Z " + std::string(to_string(level)) + " verdict: b: ok -> no_data");
    auto json = nlohmann::json::parse(json_event_line("2026-12-01T00:00:00.000Z", level, "verdict", "m", {}));
    CHECK(json["level"] == to_string(level));
  }
}

}  // namespace
}  // namespace mesh::node

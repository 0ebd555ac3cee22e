// The panel sync's one writer (node/rotation/sync_owner.h), as tables.
#include <doctest/doctest.h>

#include <algorithm>
#include <map>

#include "node/rotation/sync_owner.h"
#include "record/fleet_scale.h"
#include "tests/rotation/fixture.h"

namespace mesh::rotation {
namespace {

using verdict::ServerStatus;

Roster nine() {
  std::vector<test::TableServer> servers;
  for (int i = 1; i <= 9; ++i) servers.push_back({"n" + std::to_string(i), i % 3 == 0 ? "DE" : "NL", {"all"}});
  Roster roster = test::table_roster(servers);
  roster.params.heartbeat_interval_ms = 2'000;
  roster.params.stale_after_ms = 6'000;
  return roster;
}

// The candidates in falling score order.
std::vector<ServerId> by_score(const Roster& roster) {
  std::vector<ServerId> ids;
  for (const auto& s : roster.servers) ids.push_back(s.id);
  std::sort(ids.begin(), ids.end(), [&](const ServerId& a, const ServerId& b) {
    return owner_score(roster.version, a) > owner_score(roster.version, b);
  });
  return ids;
}

TEST_CASE("the owner is the highest score among the ok, lately reporting candidates") {
  const Roster roster = nine();
  auto evaluation = test::table_evaluation(roster);
  const auto order = by_score(roster);
  CHECK(sync_owner(roster, evaluation, {}) == order[0]);
  // Each way a candidate drops out hands the fleet to the next one.
  struct Row {
    const char* what;
    void (*spoil)(verdict::Evaluation&, const ServerId&);
  };
  const Row rows[] = {
      {"unreachable", [](verdict::Evaluation& e, const ServerId& id) { test::set_status(e, id, ServerStatus::unreachable); }},
      {"unavailable", [](verdict::Evaluation& e, const ServerId& id) { test::set_status(e, id, ServerStatus::unavailable); }},
      {"no_data", [](verdict::Evaluation& e, const ServerId& id) { test::set_status(e, id, ServerStatus::no_data); }},
      {"silent for more than two heartbeats",
       [](verdict::Evaluation& e, const ServerId& id) { test::server(e, id).last_report_ms = e.now_ms - 4'001; }},
      {"never reported", [](verdict::Evaluation& e, const ServerId& id) { test::server(e, id).last_report_ms = 0; }},
  };
  for (const Row& row : rows) {
    CAPTURE(row.what);
    auto spoiled = evaluation;
    row.spoil(spoiled, order[0]);
    CHECK(sync_owner(roster, spoiled, {}) == order[1]);
  }
  auto late = evaluation;
  test::server(late, order[0]).last_report_ms = late.now_ms - 4'000;  // exactly two heartbeats: still fresh
  CHECK(sync_owner(roster, late, {}) == order[0]);
}

TEST_CASE("above 128 servers a candidate's report may be two of the fleet's scaled heartbeats old") {
  // Found by reading: the age was held to the roster's own heartbeat, so in
  // a fleet of 400 (heartbeats every 15m37s) every owner dropped out
  // between two of its heartbeats and the role moved with them.
  std::vector<test::TableServer> servers;
  for (int i = 0; i < 400; ++i) servers.push_back({"s" + std::to_string(i), i % 2 == 0 ? "DE" : "NL", {"all"}});
  const Roster roster = test::table_roster(servers);
  CHECK(owner_report_age_max_ms(roster) == std::min(effective_stale_after_ms(roster.params, 400),
                                                    2 * effective_heartbeat_ms(roster.params, 400)));
  CHECK(owner_report_age_max_ms(roster) > 2 * roster.params.heartbeat_interval_ms);
  auto evaluation = test::table_evaluation(roster, 100'000'000);
  const auto order = by_score(roster);
  // Reported one heartbeat ago (15m37s): still the owner.
  test::server(evaluation, order[0]).last_report_ms =
      evaluation.now_ms - effective_heartbeat_ms(roster.params, 400);
  CHECK(sync_owner(roster, evaluation, {}) == order[0]);
  test::server(evaluation, order[0]).last_report_ms = evaluation.now_ms - owner_report_age_max_ms(roster) - 1;
  CHECK(sync_owner(roster, evaluation, {}) == order[1]);
  // At most 128 servers: the roster's own intervals.
  CHECK(owner_report_age_max_ms(nine()) == 4'000);
}

TEST_CASE("the latest sender's claim: the newest report that says its node sends the alerts") {
  ReportTimes times;
  times.last_report_ms = {5'000, 9'000, 7'000, 8'000};
  CHECK_FALSE(latest_sender_claim(times));  // no flags held
  times.alert_sender = {false, false, false, false};
  CHECK_FALSE(latest_sender_claim(times));
  times.alert_sender = {true, false, true, false};
  CHECK(latest_sender_claim(times) == 7'000);  // the newer of two claims (a hand-over under way)
  times.alert_sender = {false, true, false, false};
  CHECK(latest_sender_claim(times) == 9'000);
}

TEST_CASE("a candidate that flapped in its last hour, or is held out, yields to a steady one") {
  // Found by tests/panels/alert_soak: the owner's service flapping handed
  // the sync back and forth every few seconds.
  const Roster roster = nine();
  auto evaluation = test::table_evaluation(roster);
  const auto order = by_score(roster);
  test::server(evaluation, order[0]).flap_changes = 1;
  CHECK(sync_owner(roster, evaluation, {}) == order[1]);
  test::server(evaluation, order[1]).flags.held_out = true;
  CHECK(sync_owner(roster, evaluation, {}) == order[2]);
  // None steady: the best ok one, as before.
  for (const auto& id : order) test::server(evaluation, id).flap_changes = 2;
  CHECK(sync_owner(roster, evaluation, {}) == order[0]);
}

TEST_CASE("a candidate whose report says it is warming yields to a warm one, flapping or not") {
  // Found by tests/panels/alert_soak: a restarted sender took its role
  // back within a second and re-enabled a host from reports it had not
  // caught up with (node/agent/warm_up.h).
  const Roster roster = nine();
  auto evaluation = test::table_evaluation(roster);
  const auto order = by_score(roster);
  ReportTimes times = report_times(evaluation);
  times.warming.assign(roster.servers.size(), false);
  times.warming[*roster.index_of(order[0])] = true;
  CHECK(sync_owner(roster, evaluation, times, {}) == order[1]);
  CHECK(write_right(roster, evaluation, times, {}, order[0], false).right == WriteRight::not_owner);
  // Warm before steady: a warm candidate that flapped beats a warming steady one.
  for (std::size_t k = 1; k < order.size(); ++k) test::server(evaluation, order[k]).flap_changes = 1;
  CHECK(sync_owner(roster, evaluation, times, {}) == order[1]);
  // The only warm candidate gone: the warming steady one rather than none.
  test::set_status(evaluation, order[1], ServerStatus::no_data);
  for (std::size_t k = 2; k < order.size(); ++k) times.warming[*roster.index_of(order[k])] = true;
  CHECK(sync_owner(roster, evaluation, times, {}) == order[0]);
  // A fleet that starts at once is warming everywhere and still has its
  // owner by score; the same as no warming at all.
  evaluation = test::table_evaluation(roster);
  times.warming.assign(roster.servers.size(), true);
  CHECK(sync_owner(roster, evaluation, times, {}) == order[0]);
  times.warming.clear();
  CHECK(sync_owner(roster, evaluation, times, {}) == order[0]);
}

TEST_CASE("report times given apart from the evaluation: the agent's current ones") {
  const Roster roster = nine();
  const auto evaluation = test::table_evaluation(roster);  // every report 1 s old at its time
  const auto order = by_score(roster);
  ReportTimes times = report_times(evaluation);
  times.now_ms += 10'000;  // the evaluation is kept while nothing it shows changes
  for (auto& at : times.last_report_ms) at = times.now_ms - 1'000;
  const auto owner_index = *roster.index_of(order[0]);
  times.last_report_ms[owner_index] = evaluation.now_ms - 1'000;  // its reports stopped then
  CHECK(sync_owner(roster, evaluation, times, {}) == order[1]);
  CHECK(write_right(roster, evaluation, times, {}, order[1], false).right == WriteRight::owner);
}

TEST_CASE("candidates restrict the owner to the nodes that hold the panel's config") {
  const Roster roster = nine();
  const auto evaluation = test::table_evaluation(roster);
  const auto order = by_score(roster);
  const std::vector<ServerId> candidates = {order[5], order[3]};
  CHECK(sync_owner(roster, evaluation, candidates) == order[3]);
  const std::vector<ServerId> strangers = {"nobody"};
  CHECK_FALSE(sync_owner(roster, evaluation, strangers).has_value());
}

TEST_CASE("the owner moves with the roster version, and spreads over the fleet") {
  std::map<ServerId, int> owners;
  Roster roster = nine();
  for (std::uint64_t version = 1; version <= 900; ++version) {
    roster.version = version;
    auto evaluation = test::table_evaluation(roster);
    evaluation.roster_version = version;
    owners[*sync_owner(roster, evaluation, {})]++;
  }
  CHECK(owners.size() == 9);
  for (const auto& [id, count] : owners) CHECK(count > 50);  // about 100 each
}

TEST_CASE("write_right: only the owner writes, and never from a partitioned view or a suspect clock") {
  const Roster roster = nine();
  auto evaluation = test::table_evaluation(roster);
  const ServerId owner = by_score(roster)[0];
  const ServerId other = by_score(roster)[1];
  CHECK(write_right(roster, evaluation, {}, owner, false).right == WriteRight::owner);
  CHECK(write_right(roster, evaluation, {}, other, false).right == WriteRight::not_owner);
  CHECK(write_right(roster, evaluation, {}, other, false).owner == owner);
  CHECK(write_right(roster, evaluation, {}, owner, true).right == WriteRight::clock_suspect);
  // Warming: it may name itself, as the last candidate its unripe view shows; it writes nothing.
  const OwnerView warming = write_right(roster, evaluation, report_times(evaluation), {}, owner, false, true);
  CHECK(warming.right == WriteRight::warming);
  CHECK(warming.owner == owner);
  CHECK(std::string(to_string(WriteRight::warming)) == "warming");
  evaluation.partitioned = true;
  CHECK(write_right(roster, evaluation, {}, owner, false).right == WriteRight::partitioned);
  evaluation.partitioned = false;
  for (auto& v : evaluation.servers) v.last_report_ms = 0;
  CHECK(write_right(roster, evaluation, {}, owner, false).right == WriteRight::no_owner);
}

TEST_CASE("write_right: a node that has heard no one lately judges the others against their newest report") {
  const Roster roster = nine();
  auto evaluation = test::table_evaluation(roster);
  const auto order = by_score(roster);
  const ServerId self = order[8];  // the last candidate
  // Every other report 5 s old (two heartbeats are 4 s), its own fresh: it
  // is behind (its loop stalled, their frames unread), not the only one alive.
  for (auto& v : evaluation.servers) v.last_report_ms = v.id == self ? evaluation.now_ms : evaluation.now_ms - 5'000;
  const ReportTimes times = report_times(evaluation);
  CHECK(freshness_reference_ms(roster, evaluation, times, self) == evaluation.now_ms - 3'000);
  OwnerView view = write_right(roster, evaluation, times, {}, self, false);
  CHECK(view.right == WriteRight::not_owner);
  CHECK(view.owner == order[0]);
  // Judged against its clock alone it would have named itself.
  CHECK(sync_owner(roster, evaluation, times, {}) == self);
  // One candidate silent while the others go on still drops out after two heartbeats.
  auto one_silent = test::table_evaluation(roster);
  test::server(one_silent, order[0]).last_report_ms = one_silent.now_ms - 4'001;
  view = write_right(roster, one_silent, report_times(one_silent), {}, self, false);
  CHECK(view.owner == order[1]);
  CHECK(freshness_reference_ms(roster, one_silent, report_times(one_silent), self) == one_silent.now_ms);
  // Two servers, the other silent: it stays named until its status says no_data.
  Roster two = test::table_roster({{"a", "NL", {"all"}}, {"b", "DE", {"all"}}});
  two.params.heartbeat_interval_ms = 2'000;
  two.params.stale_after_ms = 6'000;
  auto pair = test::table_evaluation(two);
  const ServerId first = owner_score(two.version, "a") > owner_score(two.version, "b") ? "a" : "b";
  const ServerId second = first == "a" ? "b" : "a";
  test::server(pair, first).last_report_ms = pair.now_ms - 5'000;
  CHECK(write_right(two, pair, report_times(pair), {}, second, false).owner == first);
  test::set_status(pair, first, ServerStatus::no_data);
  CHECK(write_right(two, pair, report_times(pair), {}, second, false).right == WriteRight::owner);
}

TEST_CASE("a new owner writes once its view has named it for two heartbeats, at most 10 s") {
  Roster roster = nine();
  CHECK(owner_settle_ms(roster) == 4'000);
  roster.params.heartbeat_interval_ms = 300'000;
  CHECK(owner_settle_ms(roster) == 10'000);
  // At a takeover a node whose view lacks a higher candidate's latest
  // report names itself for a moment (n6 for 2 s after the owner's kill,
  // panel_fleet_test under a sanitized load): it writes nothing then.
  OwnerTerm term;
  CHECK_FALSE(term.observe(WriteRight::owner, 100'000, 2'000));
  CHECK(term.since_ms() == 100'000);
  CHECK_FALSE(term.observe(WriteRight::owner, 101'000, 2'000));
  CHECK_FALSE(term.observe(WriteRight::not_owner, 101'500, 2'000));  // the higher one heard: the term ends
  CHECK(term.since_ms() == -1);
  CHECK_FALSE(term.observe(WriteRight::owner, 102'000, 2'000));       // named again: a new term
  CHECK_FALSE(term.observe(WriteRight::owner, 103'999, 2'000));
  CHECK(term.observe(WriteRight::owner, 104'000, 2'000));              // held for 2 s: it writes
  CHECK(term.observe(WriteRight::owner, 200'000, 2'000));
  // Any right that forbids writing ends the term, not only another owner.
  for (WriteRight right : {WriteRight::no_owner, WriteRight::partitioned, WriteRight::clock_suspect,
                           WriteRight::warming}) {
    CHECK_FALSE(term.observe(right, 201'000, 2'000));
    CHECK_FALSE(term.observe(WriteRight::owner, 201'500, 2'000));
    CHECK(term.observe(WriteRight::owner, 203'500, 2'000));
  }
  // A clock stepped back starts the term again instead of granting it.
  CHECK_FALSE(term.observe(WriteRight::owner, 150'000, 2'000));
  CHECK(term.since_ms() == 150'000);
}

}  // namespace
}  // namespace mesh::rotation

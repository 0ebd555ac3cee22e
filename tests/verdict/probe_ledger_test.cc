// ProbeLedger: the streak update rules (docs/VERDICTS.md, "Probe streaks"),
// clock jumps, forgetting, the bound, and the view a report carries.
#include <doctest/doctest.h>

#include <algorithm>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "tests/verdict/fixtures.h"
#include "verdict/observed.h"
#include "verdict/probe_ledger.h"
#include "verdict/witnesses.h"

using namespace mesh;
using namespace mesh::verdict;
using namespace mesh::verdict::testing;

namespace {

constexpr UnixMs kMinute = 60'000;
constexpr DurationMs kRestartMs = Parameters{}.stale_after_ms;  // what drivers pass

// Records `outcome` for `id` and returns a copy of the updated streak.
TargetStreak record(ProbeLedger& ledger, const std::string& id, UnixMs at, ProbeFailure outcome) {
  const TargetStreak* streak = ledger.record(id, at, outcome, kRestartMs);
  REQUIRE(streak != nullptr);
  return *streak;
}

// Roster `base` with its servers in a new order and a new version.
Roster reordered(const Roster& base, const std::vector<std::uint32_t>& order, std::uint64_t version) {
  Roster roster = base;
  roster.version = version;
  roster.servers.clear();
  for (std::uint32_t i : order) roster.servers.push_back(base.servers[i]);
  return roster;
}

}  // namespace

TEST_CASE("probe ledger: a first success and a first failure") {
  ProbeLedger ledger;
  TargetStreak ok = record(ledger, "de-1", kT0, ProbeFailure::none);
  CHECK(ok.id == "de-1");
  CHECK(ok.ok_streak == 1);
  CHECK(ok.fail_streak == 0);
  CHECK(ok.last_probe_ms == kT0);
  CHECK(ok.last_ok_ms == kT0);
  CHECK(ok.reason == ProbeFailure::none);
  CHECK(ok.probes == 1);

  TargetStreak failed = record(ledger, "nl-1", kT0 + 5, ProbeFailure::tcp_timeout);
  CHECK(failed.fail_streak == 1);
  CHECK(failed.ok_streak == 0);
  CHECK(failed.last_probe_ms == kT0 + 5);
  CHECK(failed.last_ok_ms == 0);  // never succeeded
  CHECK(failed.reason == ProbeFailure::tcp_timeout);
  CHECK(ledger.size() == 2);
  CHECK(ledger.find("fr-1") == nullptr);
}

TEST_CASE("probe ledger: failures keep last_ok, take the latest reason; a success resets") {
  ProbeLedger ledger;
  record(ledger, "de-1", kT0, ProbeFailure::none);
  record(ledger, "de-1", kT0 + kMinute, ProbeFailure::none);
  TargetStreak s = record(ledger, "de-1", kT0 + 2 * kMinute, ProbeFailure::tcp_timeout);
  CHECK(s.fail_streak == 1);
  CHECK(s.ok_streak == 0);
  CHECK(s.last_ok_ms == kT0 + kMinute);
  s = record(ledger, "de-1", kT0 + 3 * kMinute, ProbeFailure::tcp_refused);
  CHECK(s.fail_streak == 2);
  CHECK(s.reason == ProbeFailure::tcp_refused);
  CHECK(s.last_probe_ms == kT0 + 3 * kMinute);
  CHECK(s.last_ok_ms == kT0 + kMinute);

  s = record(ledger, "de-1", kT0 + 4 * kMinute, ProbeFailure::none);
  CHECK(s.fail_streak == 0);
  CHECK(s.ok_streak == 1);
  CHECK(s.reason == ProbeFailure::none);
  CHECK(s.last_ok_ms == kT0 + 4 * kMinute);
  CHECK(s.probes == 5);
}

TEST_CASE("probe ledger: streaks saturate at kStreakMax") {
  ProbeLedger ledger;
  for (std::uint32_t i = 0; i < kStreakMax + 3; ++i) {
    ledger.record("de-1", kT0 + i, ProbeFailure::none, kRestartMs);
    ledger.record("nl-1", kT0 + i, ProbeFailure::tcp_unreachable, kRestartMs);
  }
  CHECK(ledger.find("de-1")->ok_streak == kStreakMax);
  CHECK(ledger.find("nl-1")->fail_streak == kStreakMax);
  CHECK(ledger.find("nl-1")->probes == std::uint64_t{kStreakMax} + 3);
  // One opposite outcome still resets a saturated streak.
  CHECK(record(ledger, "de-1", kT0 + kStreakMax + 3, ProbeFailure::tls_alert).fail_streak == 1);
  CHECK(record(ledger, "nl-1", kT0 + kStreakMax + 3, ProbeFailure::none).ok_streak == 1);
}

TEST_CASE("probe ledger: every streak satisfies the ProbeResult invariants") {
  // A fixed pseudo-random outcome sequence over a few targets.
  ProbeLedger ledger;
  std::uint64_t state = 12345;
  std::vector<UnixMs> last_success(3, 0);
  for (int step = 0; step < 3000; ++step) {
    state = state * 6364136223846793005ull + 1442695040888963407ull;
    const std::uint32_t target = static_cast<std::uint32_t>(state >> 62) % 3;
    const auto outcome = static_cast<ProbeFailure>((state >> 40) % (kProbeFailureMax + 1));
    const UnixMs at = kT0 + step * 1000;
    if (outcome == ProbeFailure::none) last_success[target] = at;
    TargetStreak s = record(ledger, "de-" + std::to_string(target + 1), at, outcome);
    CAPTURE(step);
    CHECK((s.fail_streak > 0) == (s.reason != ProbeFailure::none));
    CHECK((s.ok_streak > 0) == (s.reason == ProbeFailure::none));
    CHECK(s.last_ok_ms == last_success[target]);
    CHECK(s.last_ok_ms <= s.last_probe_ms);
  }
}

TEST_CASE("probe ledger: shift moves every recorded time, never 'never'") {
  ProbeLedger ledger;
  record(ledger, "de-1", kT0, ProbeFailure::none);
  record(ledger, "de-1", kT0 + kMinute, ProbeFailure::tcp_timeout);
  record(ledger, "nl-1", kT0 + kMinute, ProbeFailure::tcp_timeout);  // never succeeded
  ledger.shift(-5 * kMinute);
  CHECK(ledger.find("de-1")->last_probe_ms == kT0 - 4 * kMinute);
  CHECK(ledger.find("de-1")->last_ok_ms == kT0 - 5 * kMinute);
  CHECK(ledger.find("nl-1")->last_probe_ms == kT0 - 4 * kMinute);
  CHECK(ledger.find("nl-1")->last_ok_ms == 0);
  ledger.shift(20'000);
  CHECK(ledger.find("de-1")->last_ok_ms == kT0 - 5 * kMinute + 20'000);
  CHECK(ledger.find("de-1")->fail_streak == 1);  // streaks untouched

  SUBCASE("a success shifted to or before the epoch stays a success") {
    ledger.shift(-kT0);
    CHECK(ledger.find("de-1")->last_ok_ms == 1);
    CHECK(ledger.find("nl-1")->last_ok_ms == 0);
  }
  SUBCASE("wild jumps saturate instead of overflowing") {
    ledger.shift(std::numeric_limits<DurationMs>::max());
    CHECK(ledger.find("de-1")->last_probe_ms == std::numeric_limits<UnixMs>::max());
    ledger.shift(std::numeric_limits<DurationMs>::min());
    CHECK(ledger.find("de-1")->last_probe_ms < 0);
    CHECK(ledger.find("de-1")->last_ok_ms == 1);
  }
}

TEST_CASE("probe ledger: clear and retain_only forget targets") {
  Roster roster = make_roster({"DE", "NL"}, {3, 2});  // de-1 de-2 de-3 nl-1 nl-2
  ProbeLedger ledger;
  for (const ServerEntry& server : roster.servers) {
    record(ledger, server.id, kT0, ProbeFailure::tcp_timeout);
  }
  record(ledger, "fr-9", kT0, ProbeFailure::none);  // not in the roster at all
  CHECK(ledger.size() == 6);

  Roster smaller = reordered(roster, {4, 0, 2}, 8);  // nl-2 de-1 de-3
  ledger.retain_only(smaller);
  CHECK(ledger.size() == 3);
  std::vector<std::string> kept;
  for (const TargetStreak& s : ledger.streaks()) kept.push_back(s.id);
  CHECK(kept == std::vector<std::string>{"de-1", "de-3", "nl-2"});
  CHECK(ledger.find("de-2") == nullptr);
  CHECK(ledger.find("fr-9") == nullptr);
  CHECK(ledger.find("de-1")->fail_streak == 1);  // kept ones are untouched

  // A removed target that comes back starts afresh.
  CHECK(record(ledger, "de-2", kT0 + kMinute, ProbeFailure::tcp_timeout).fail_streak == 1);

  ledger.clear();
  CHECK(ledger.size() == 0);
  CHECK(ledger.find("de-1") == nullptr);
}

TEST_CASE("probe ledger: restore puts back a stored streak and refuses a broken one") {
  ProbeLedger ledger;
  const TargetStreak failing{"de-1", 4, 0, 5 * kMinute, kMinute, ProbeFailure::tls_reset, 9};
  REQUIRE(ledger.restore(failing));
  CHECK(*ledger.find("de-1") == failing);
  // The next outcome continues the streak (no gap).
  CHECK(record(ledger, "de-1", 6 * kMinute, ProbeFailure::tls_reset).fail_streak == 5);
  // A later restore replaces the held streak.
  const TargetStreak healthy{"de-1", 0, 2, 7 * kMinute, 7 * kMinute, ProbeFailure::none, 11};
  REQUIRE(ledger.restore(healthy));
  CHECK(*ledger.find("de-1") == healthy);
  const std::vector<TargetStreak> broken = {
      {"De 1", 0, 1, kMinute, kMinute, ProbeFailure::none, 1},            // id breaks the rule
      {"nl-1", 0, 1, kMinute, kMinute, static_cast<ProbeFailure>(99), 1},  // reason outside the enum
      {"nl-1", 2, 0, kMinute, 0, ProbeFailure::none, 2},                   // failing streak, no reason
      {"nl-1", 0, 0, kMinute, 0, ProbeFailure::tcp_timeout, 1},            // a reason, no failing streak
      {"nl-1", 1, 3, kMinute, 0, ProbeFailure::tcp_timeout, 4},            // both streaks
      {"nl-1", kStreakMax + 1, 0, kMinute, 0, ProbeFailure::tcp_timeout, 1},
      {"nl-1", 0, 1, kMinute, kMinute, ProbeFailure::none, 0},             // no probe counted
      {"nl-1", 0, 1, kMinute, -5, ProbeFailure::none, 1},                  // negative last_ok
  };
  for (const TargetStreak& streak : broken) {
    CAPTURE(streak.id);
    CHECK_FALSE(ledger.restore(streak));
  }
  CHECK(ledger.size() == 1);
  CHECK(ledger.find("nl-1") == nullptr);
}

TEST_CASE("probe ledger: a failure streak is unanswered until a probe fails after the target spoke") {
  Roster roster = make_roster({"DE", "NL"}, {3, 3});  // de-1 de-2 de-3 nl-1 nl-2 nl-3
  ProbeLedger ledger;
  const std::vector<std::uint32_t> targets = {0};
  auto unanswered = [&] { return ledger.view_for(roster, targets, 1).results.at(0).unanswered_since_ms; };
  const DurationMs stale = kMinute * 12;
  UnixMs heard = kT0 - 30'000;  // de-1's latest report, signed before the streak
  record(ledger, "de-1", kT0 - kMinute, ProbeFailure::none);
  // The first failed probe began at -5 s: the streak began then.
  ledger.record("de-1", kT0, ProbeFailure::tcp_timeout, stale, heard, kT0 - 5'000, heard);
  CHECK(ledger.find("de-1")->failing_since_ms == kT0 - 5'000);
  CHECK(unanswered() == kT0 - 5'000);  // nothing of it since the streak began
  // It spoke at +10 s, heard at +12 s; a probe begun at +5 s fails at +15 s:
  // begun before we heard it, it confirms nothing.
  heard = kT0 + 10'000;
  ledger.record("de-1", kT0 + 15'000, ProbeFailure::tcp_timeout, stale, heard, kT0 + 5'000, kT0 + 12'000);
  CHECK(unanswered() == kT0 - 5'000);
  // One begun at +12 s (as we heard it) fails: answered, for the streak
  // (on its way: 2 failures before it, below fail_streak 3).
  ledger.record("de-1", kT0 + kMinute, ProbeFailure::tcp_timeout, stale, heard, kT0 + 12'000, kT0 + 12'000, 3);
  CHECK(unanswered() == 0);
  CHECK(ledger.find("de-1")->answered);
  ledger.record("de-1", kT0 + 2 * kMinute, ProbeFailure::tcp_timeout, stale, heard, kT0 + 2 * kMinute - 10'000,
                kT0 + 12'000, 3);
  CHECK(unanswered() == 0);
  CHECK(ledger.find("de-1")->failing_since_ms == kT0 - 5'000);  // the streak's first failed probe
  // A success ends the streak; the next one starts unanswered again.
  ledger.record("de-1", kT0 + 3 * kMinute, ProbeFailure::none, stale, heard);
  CHECK(ledger.find("de-1")->failing_since_ms == 0);
  CHECK_FALSE(ledger.find("de-1")->answered);
  ledger.record("de-1", kT0 + 4 * kMinute, ProbeFailure::tcp_reset, stale, heard);
  CHECK(unanswered() == kT0 + 4 * kMinute);  // begun when it ended (no start given)
  // A restored streak that breaks these rules is refused.
  TargetStreak bad = *ledger.find("de-1");
  bad.failing_since_ms = bad.last_probe_ms + 1;  // began after its last probe
  CHECK_FALSE(ledger.restore(bad));
  TargetStreak ok_answered;
  ok_answered.id = "nl-1";
  ok_answered.ok_streak = 1;
  ok_answered.probes = 1;
  ok_answered.answered = true;  // an ok streak is never answered
  CHECK_FALSE(ledger.restore(ok_answered));
}

// One target, de-1 (roster index 0), in the view of the observer at index
// 1; `stale` is the roster's stale_after the outcomes are recorded with.
struct OneTarget {
  Roster roster = make_roster({"DE", "NL"}, {3, 3});
  ProbeLedger ledger;
  const DurationMs stale = kMinute * 12;
  UnixMs unanswered() const {
    const std::vector<std::uint32_t> targets = {0};
    return ledger.view_for(roster, targets, 1).results.at(0).unanswered_since_ms;
  }
};

// meshsim's detection sweep (an IP block by one country, start 7m39s, the
// slowest node 61 s after it): a compatriot witness's first probe began at
// +0 s and timed out at +5 s; the target, refuting the first witness, had
// signed a report at +4.9 s. Counted from the outcome, the streak had not
// been answered by it, grew to fail_streak in silence, and took two more
// probes (12 s). The target spoke while the first failed probe was out.
TEST_CASE_FIXTURE(OneTarget, "probe ledger: a report signed while the first failed probe was out answers the streak") {
  const UnixMs before = kT0 - kMinute;  // the target's last report before the block
  record(ledger, "de-1", kT0 - 30'000, ProbeFailure::none);
  ledger.record("de-1", kT0 + 5'000, ProbeFailure::tcp_timeout, stale, before, kT0, before, 3);
  CHECK(unanswered() == kT0);
  const UnixMs spoke = kT0 + 4'900;  // signed while the first probe was out; heard at +9 s
  ledger.record("de-1", kT0 + 11'000, ProbeFailure::tcp_timeout, stale, spoke, kT0 + 6'000, kT0 + 9'000, 3);
  CHECK(unanswered() == kT0);  // that probe began before we heard it
  ledger.record("de-1", kT0 + 25'000, ProbeFailure::tcp_timeout, stale, spoke, kT0 + 20'000, kT0 + 9'000, 3);
  CHECK(ledger.find("de-1")->fail_streak == 3);
  CHECK(ledger.find("de-1")->answered);  // on its way when heard: one answer, a vote at once
  CHECK(unanswered() == 0);
  // A report signed before the first failed probe began answers nothing.
  ProbeLedger other;
  record(other, "de-1", kT0 - 30'000, ProbeFailure::none);
  for (int i = 0; i < 3; ++i) {
    other.record("de-1", kT0 + 5'000 + i * 10'000, ProbeFailure::tcp_timeout, stale, kT0 - 100, kT0 + i * 10'000,
                 kT0 - 50, 3);
  }
  CHECK_FALSE(other.find("de-1")->answered);
  // The streak never begins at or before the success it follows.
  ProbeLedger close;
  record(close, "de-1", kT0, ProbeFailure::none);
  close.record("de-1", kT0 + 5'000, ProbeFailure::tcp_timeout, stale, 0, kT0 - 1'000);
  CHECK(close.find("de-1")->failing_since_ms == kT0 + 1);
}

// tests/e2e scenario 12: a split heals rule by rule; the target's report is
// relayed across before its own path opens, and the probe it hurried fails.
TEST_CASE_FIXTURE(OneTarget, "probe ledger: a streak grown in silence needs two answers, one on its way needs one") {
  const UnixMs before = kT0 - 30'000;  // the target's last report before the split
  for (int i = 0; i < 5; ++i) {  // five failures across the split, nothing heard
    ledger.record("de-1", kT0 + i * 2'000, ProbeFailure::tcp_timeout, stale, before, kT0 + i * 2'000 - 1'000,
                  before, 3);
  }
  CHECK(unanswered() == kT0 - 1'000);
  // The heal: a report it signed at +20 s arrives by a relay; a probe sent after it fails.
  const UnixMs spoke = kT0 + 20'000;
  ledger.record("de-1", kT0 + 22'000, ProbeFailure::tcp_timeout, stale, spoke, kT0 + 21'000, kT0 + 21'000, 3);
  CHECK(ledger.find("de-1")->answers == 1);
  CHECK_FALSE(ledger.find("de-1")->answered);
  CHECK(unanswered() == kT0 - 1'000);  // not a vote yet
  // The next one gets through: the streak ends, nothing was ever a vote.
  ledger.record("de-1", kT0 + 24'000, ProbeFailure::none, stale, spoke, kT0 + 23'000, kT0 + 21'000, 3);
  CHECK(ledger.find("de-1")->fail_streak == 0);
  CHECK(ledger.find("de-1")->answers == 0);
  // Had it failed again, the second answer would have answered it.
  // A new streak (a censor's block): its first failure at +30 s, the target
  // speaks at +31 s, the probe sent at +33 s fails: on its way (one failure
  // before it), one answer is enough.
  ledger.record("de-1", kT0 + 30'000, ProbeFailure::tcp_timeout, stale, spoke, kT0 + 29'000, kT0 + 21'000, 3);
  CHECK(unanswered() == kT0 + 29'000);
  ledger.record("de-1", kT0 + 34'000, ProbeFailure::tcp_timeout, stale, kT0 + 31'000, kT0 + 33'000,
                kT0 + 31'500, 3);
  CHECK(ledger.find("de-1")->answered);
  CHECK(unanswered() == 0);
  TargetStreak half = *ledger.find("de-1");
  half.answered = false;
  half.answers = 1;
  CHECK(ledger.restore(half));
  half.answers = 2;  // two answers and not answered: refused
  CHECK_FALSE(ledger.restore(half));
}

TEST_CASE("probe ledger: the view is sorted by roster index, skips self and unprobed targets") {
  Roster roster = make_roster({"DE", "NL"}, {3, 3});  // de-1 de-2 de-3 nl-1 nl-2 nl-3
  ProbeLedger ledger;
  record(ledger, "nl-3", kT0, ProbeFailure::none);
  record(ledger, "de-1", kT0, ProbeFailure::tcp_timeout);
  record(ledger, "de-1", kT0 + kMinute, ProbeFailure::tcp_reset);
  record(ledger, "de-3", kT0 + kMinute, ProbeFailure::none);
  record(ledger, "nl-1", kT0, ProbeFailure::none);  // probed, but not a target now
  record(ledger, "de-2", kT0, ProbeFailure::none);  // self: never reported

  const std::uint32_t self = 1;  // de-2
  const std::vector<std::uint32_t> targets = {5, 0, 1, 4, 2};  // nl-2 (4) never probed
  ProbeView view = ledger.view_for(roster, targets, self);
  CHECK(view.roster_version == roster.version);
  REQUIRE(view.results.size() == 3);
  // Nothing heard of de-1 since: its failure is unanswered since the first one.
  CHECK(view.results[0] == ProbeResult{0, 2, 0, kT0 + kMinute, 0, ProbeFailure::tcp_reset, false, kT0});
  CHECK(view.results[1] == ProbeResult{2, 0, 1, kT0 + kMinute, kT0 + kMinute, ProbeFailure::none});
  CHECK(view.results[2] == ProbeResult{5, 0, 1, kT0, kT0, ProbeFailure::none});

  SUBCASE("repeated targets give one result") {
    const std::vector<std::uint32_t> twice = {0, 0, 2, 2};
    CHECK(ledger.view_for(roster, twice, self).results.size() == 2);
  }
  SUBCASE("no targets, an empty view on the roster's version") {
    ProbeView empty = ledger.view_for(roster, {}, self);
    CHECK(empty.results.empty());
    CHECK(empty.roster_version == roster.version);
  }
}

TEST_CASE("probe ledger: the same streaks under another roster version's numbering") {
  Roster v1 = make_roster({"DE", "NL"}, {3, 3});     // de-1 de-2 de-3 nl-1 nl-2 nl-3
  Roster v2 = reordered(v1, {5, 3, 0, 1}, v1.version + 1);  // nl-3 nl-1 de-1 de-2
  ProbeLedger ledger;
  record(ledger, "de-1", kT0, ProbeFailure::tcp_timeout);
  record(ledger, "nl-1", kT0, ProbeFailure::none);
  record(ledger, "nl-3", kT0, ProbeFailure::tcp_refused);

  const std::vector<std::uint32_t> all1 = {0, 2, 3, 4, 5};  // self de-2 = 1
  ProbeView view1 = ledger.view_for(v1, all1, 1);
  REQUIRE(view1.results.size() == 3);
  CHECK(view1.results[0].target == 0);  // de-1
  CHECK(view1.results[1].target == 3);  // nl-1
  CHECK(view1.results[2].target == 5);  // nl-3

  const std::vector<std::uint32_t> all2 = {0, 1, 2};  // self de-2 = 3
  ProbeView view2 = ledger.view_for(v2, all2, 3);
  CHECK(view2.roster_version == v1.version + 1);
  REQUIRE(view2.results.size() == 3);
  CHECK(view2.results[0].target == 0);  // nl-3
  CHECK(view2.results[0].reason == ProbeFailure::tcp_refused);
  CHECK(view2.results[1].target == 1);  // nl-1
  CHECK(view2.results[1].ok_streak == 1);
  CHECK(view2.results[2].target == 2);  // de-1
  CHECK(view2.results[2].reason == ProbeFailure::tcp_timeout);
}

TEST_CASE("probe ledger: a view of the assigned targets votes as the verdict rules read it") {
  Roster roster = make_roster({"DE", "NL", "RU", "US"}, {5, 5, 5, 5}, 3);
  const std::uint32_t self = 10;  // ru-1
  const std::vector<std::uint32_t> targets = probe_targets(roster, self, kT0);
  REQUIRE(!targets.empty());
  ProbeLedger ledger;
  const std::uint32_t blocked = targets.front();
  for (int round = 0; round < 3; ++round) {
    const UnixMs at = kT0 + round * kMinute;
    for (std::uint32_t t : targets) {
      ledger.record(roster.servers[t].id, at,
                    t == blocked ? ProbeFailure::tcp_timeout : ProbeFailure::none, kRestartMs);
    }
  }
  ObservedReport observed;
  observed.origin = self;
  observed.timestamp_ms = kT0 + 2 * kMinute;
  observed.report.view = ledger.view_for(roster, targets, self);
  CHECK(observed.report.view.results.size() == targets.size());
  std::vector<std::uint32_t> failing;
  std::size_t counted = 0;
  for_each_counted_result(observed, roster.params, 20, [&](const ProbeResult& result) {
    ++counted;
    if (is_failing(result, roster.params)) failing.push_back(result.target);
  });
  CHECK(counted == targets.size());  // sorted, no repeats, no self: every result counts
  CHECK(failing == std::vector<std::uint32_t>{blocked});
}

TEST_CASE("probe ledger: no allocation per probe once every target has an entry") {
  ProbeLedger ledger;
  std::vector<std::string> ids;
  for (int i = 1; i <= 45; ++i) ids.push_back("de-" + std::to_string(i));
  for (const std::string& id : ids) ledger.record(id, kT0, ProbeFailure::none, kRestartMs);
  const TargetStreak* storage = ledger.streaks().data();
  for (int round = 1; round <= 20; ++round) {
    for (const std::string& id : ids) ledger.record(id, kT0 + round * kMinute, ProbeFailure::none, kRestartMs);
  }
  CHECK(ledger.streaks().data() == storage);
  CHECK(ledger.size() == 45);
  CHECK(ledger.find("de-45")->ok_streak == 21);
}

TEST_CASE("probe ledger: at kProbeLedgerTargetsMax a new target is dropped and counted") {
  ProbeLedger ledger;
  for (std::size_t i = 0; i < kProbeLedgerTargetsMax; ++i) {
    REQUIRE(ledger.record("s-" + std::to_string(i), kT0, ProbeFailure::none, kRestartMs) != nullptr);
  }
  CHECK(ledger.size() == kProbeLedgerTargetsMax);
  CHECK(ledger.record("one-too-many", kT0, ProbeFailure::none, kRestartMs) == nullptr);
  CHECK(ledger.dropped() == 1);
  CHECK(ledger.find("one-too-many") == nullptr);
  // Known targets are still recorded.
  CHECK(record(ledger, "s-7", kT0 + kMinute, ProbeFailure::none).ok_streak == 2);
  CHECK(ledger.size() == kProbeLedgerTargetsMax);
  ledger.clear();
  CHECK(ledger.dropped() == 1);  // a lifetime counter
}

TEST_CASE("probe ledger: a gap longer than restart_after_ms restarts both streaks") {
  ProbeLedger ledger;
  for (int i = 0; i < 5; ++i) record(ledger, "nl-1", kT0 + i * kMinute, ProbeFailure::tcp_timeout);
  CHECK(ledger.find("nl-1")->fail_streak == 5);
  // Probed again exactly at the bound: the streak goes on.
  const UnixMs at_bound = kT0 + 4 * kMinute + kRestartMs;
  CHECK(record(ledger, "nl-1", at_bound, ProbeFailure::tcp_timeout).fail_streak == 6);
  // Past the bound: one failure is a streak of one, not seven.
  const TargetStreak after_gap =
      record(ledger, "nl-1", at_bound + kRestartMs + 1, ProbeFailure::tcp_timeout);
  CHECK(after_gap.fail_streak == 1);
  CHECK(after_gap.ok_streak == 0);
  // The same for ok streaks; last_ok_ms survives a gap.
  record(ledger, "de-1", kT0, ProbeFailure::none);
  record(ledger, "de-1", kT0 + kMinute, ProbeFailure::none);
  const TargetStreak ok_after_gap =
      record(ledger, "de-1", kT0 + kMinute + kRestartMs + 1, ProbeFailure::tcp_refused);
  CHECK(ok_after_gap.fail_streak == 1);
  CHECK(ok_after_gap.last_ok_ms == kT0 + kMinute);
  CHECK(record(ledger, "de-1", kT0 + 2 * kMinute + kRestartMs + 1, ProbeFailure::none).ok_streak == 1);
}

TEST_CASE("probe ledger: a recovery is flagged for the roster's fail_streak probes") {
  Roster roster = make_roster({"DE", "NL"}, {2, 2});  // de-1 de-2 nl-1 nl-2
  const std::uint32_t within = roster.params.fail_streak;
  REQUIRE(within == 3);
  const std::vector<std::uint32_t> targets = {1, 2, 3};
  ProbeLedger ledger;
  auto flagged = [&](std::uint32_t target) {
    for (const ProbeResult& r : ledger.view_for(roster, targets, 0).results) {
      if (r.target == target) return r.recovered;
    }
    FAIL("no result for the target");
    return false;
  };
  UnixMs at = kT0;
  // nl-1: ok from its first probe: a first success is not a recovery.
  record(ledger, "nl-1", at, ProbeFailure::none);
  CHECK_FALSE(flagged(2));
  // de-2: fails twice, then gets through: flagged for 3 probes, then not.
  record(ledger, "de-2", at, ProbeFailure::tcp_timeout);
  record(ledger, "de-2", at += kMinute, ProbeFailure::tcp_timeout);
  CHECK_FALSE(flagged(1));  // a failing result is never flagged
  for (int probe = 1; probe <= 3; ++probe) {
    record(ledger, "de-2", at += kMinute, ProbeFailure::none);
    CHECK_MESSAGE(flagged(1), "ok probe " << probe);
  }
  record(ledger, "de-2", at += kMinute, ProbeFailure::none);
  CHECK_FALSE(flagged(1));
  // A new failure ends the recovery; the next success starts another.
  record(ledger, "de-2", at += kMinute, ProbeFailure::tls_reset);
  CHECK_FALSE(flagged(1));
  record(ledger, "de-2", at += kMinute, ProbeFailure::none);
  CHECK(flagged(1));
  // nl-2: a failure, then a gap longer than the restart window: the success
  // after the gap starts afresh and is not a recovery.
  record(ledger, "nl-2", at, ProbeFailure::tcp_refused);
  record(ledger, "nl-2", at + kRestartMs + 1, ProbeFailure::none);
  CHECK_FALSE(flagged(3));
}

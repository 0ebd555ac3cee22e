// TLS turns (node/agent/tls_turns.h): who of a country's witnesses makes
// the next TLS probe of a target, and what makes a probe TLS at once.
#include <doctest/doctest.h>

#include <algorithm>
#include <limits>
#include <map>
#include <set>

#include "node/agent/tls_turns.h"
#include "tests/agent/fleet.h"

namespace mesh::agent::testing {
namespace {

constexpr UnixMs kMin = std::numeric_limits<UnixMs>::min();

TEST_CASE("a witness's turn is its rank among the witnesses of its own country") {
  // 12 servers in 3 countries: each target gets 3 witnesses per country
  // (all of a country but the target itself where it has 4).
  Roster roster = small_roster(12, 3);
  const verdict::WitnessPlan plan = verdict::plan_witnesses(roster, 0);
  REQUIRE_FALSE(plan.full_mesh);
  for (std::uint32_t target = 0; target < 12; ++target) {
    std::map<std::string, std::vector<std::uint32_t>> by_country;
    for (std::uint32_t w : plan.witnesses(target)) by_country[roster.servers[w].country].push_back(w);
    for (const auto& [country, witnesses] : by_country) {
      for (std::uint32_t k = 0; k < witnesses.size(); ++k) {
        const TlsTurn turn = tls_turn_of(plan, roster, witnesses[k], target);
        CHECK(turn.rank == k);
        CHECK(turn.turns == witnesses.size());
      }
    }
  }
  // The full mesh: every compatriot but the target.
  Roster small = small_roster(6, 2);  // DE: 0 2 4, NL: 1 3 5
  const verdict::WitnessPlan mesh = verdict::plan_witnesses(small, 0);
  REQUIRE(mesh.full_mesh);
  CHECK(tls_turn_of(mesh, small, 4, 5) == TlsTurn{2, 3});
  CHECK(tls_turn_of(mesh, small, 4, 2) == TlsTurn{1, 2});
  CHECK(tls_turn_of(mesh, small, 1, 2) == TlsTurn{0, 3});
  CHECK(tls_turn_of(mesh, small, 5, 1) == TlsTurn{1, 2});
}

TEST_CASE("turns: slot n of target t belongs to rank (n + t) mod turns, one rank per slot") {
  constexpr DurationMs kSlot = 300'000;
  for (std::uint32_t target : {0u, 1u, 7u, 999u}) {
    for (std::uint32_t turns : {1u, 2u, 3u, 5u}) {
      std::set<UnixMs> starts;  // every rank's latest turn start, over a day
      for (UnixMs now = kStartMs; now < kStartMs + 86'400'000; now += 37'000) {
        for (std::uint32_t rank = 0; rank < turns; ++rank) {
          const UnixMs start = latest_turn_ms({rank, turns}, target, now, kSlot);
          CHECK(start <= now);
          CHECK(now - start < kSlot * turns);
          starts.insert(start);
        }
      }
      // Starts are kSlot apart: together the ranks cover every slot once.
      std::vector<UnixMs> sorted(starts.begin(), starts.end());
      for (std::size_t k = 1; k < sorted.size(); ++k) CHECK(sorted[k] - sorted[k - 1] == kSlot);
    }
  }
  // Targets are shifted apart, so a node's turns do not fall together.
  std::set<UnixMs> shifts;
  for (std::uint32_t target = 0; target < 20; ++target) {
    shifts.insert(latest_turn_ms({0, 1}, target, kStartMs, kSlot));
  }
  CHECK(shifts.size() >= 18);
  // A node of the same rank for every target has turns in every slot:
  // over one slot's time, a third of its targets (turns of 3) turn.
  for (std::uint32_t rank = 0; rank < 3; ++rank) {
    for (UnixMs now = kStartMs; now < kStartMs + 3 * kSlot; now += kSlot / 2) {
      int turned = 0;
      for (std::uint32_t target = 0; target < 30; ++target) {
        turned += now - latest_turn_ms({rank, 3}, target, now, kSlot) < kSlot;
      }
      CHECK(turned >= 7);
      CHECK(turned <= 13);
    }
  }
  // Times before 1970 are on the same grid.
  CHECK(latest_turn_ms({0, 1}, 0, -1, kSlot) == -kSlot);
}

TEST_CASE("wants_tls: a turn, a newer compatriot failure, a failed TLS stage, a first success after a failure") {
  verdict::TargetStreak fine;
  fine.ok_streak = 5;
  fine.probes = 9;
  // {streak, last TLS probe, target added, compatriot's failure, latest turn}
  CHECK_FALSE(wants_tls({&fine, 1'000, 0, kMin, 500}));
  CHECK(wants_tls({&fine, 1'000, 0, kMin, 1'001}));      // its turn came since the last TLS probe
  CHECK(wants_tls({&fine, 1'000, 0, 1'200, 500}));       // a compatriot failed TLS after it
  CHECK_FALSE(wants_tls({&fine, 1'000, 0, 900, 500}));   // ... before it: already checked
  // A new target waits for its next turn, unless a compatriot fails it.
  CHECK_FALSE(wants_tls({nullptr, kMin, 1'000, kMin, 500}));
  CHECK(wants_tls({nullptr, kMin, 1'000, kMin, 1'001}));
  CHECK(wants_tls({nullptr, kMin, 1'000, 900, 500}));
  verdict::TargetStreak reset = fine;
  reset.ok_streak = 0;
  reset.fail_streak = 1;
  reset.reason = ProbeFailure::tls_reset;
  CHECK(wants_tls({&reset, 1'000, 0, kMin, 500}));
  reset.reason = ProbeFailure::tcp_timeout;  // an IP block: TCP probes until it lifts
  CHECK_FALSE(wants_tls({&reset, 1'000, 0, kMin, 500}));
  verdict::TargetStreak back = fine;
  back.ok_streak = 1;
  CHECK(wants_tls({&back, 1'000, 0, kMin, 500}));
  back.probes = 1;  // the very first probe is no recovery
  CHECK_FALSE(wants_tls({&back, 1'000, 0, kMin, 500}));
  for (ProbeFailure stage : {ProbeFailure::tls_timeout, ProbeFailure::tls_reset,
                             ProbeFailure::tls_alert, ProbeFailure::tls_bad_peer}) {
    CHECK(is_tls_stage(stage));
  }
  for (ProbeFailure stage : {ProbeFailure::none, ProbeFailure::tcp_timeout,
                             ProbeFailure::tcp_refused, ProbeFailure::tcp_unreachable}) {
    CHECK_FALSE(is_tls_stage(stage));
  }
}

// Every probe request of the fleet: (time, observer, target, tls).
struct Asked {
  UnixMs at;
  std::uint32_t observer;
  std::string target;
  bool tls;
};

TEST_CASE("a country's witnesses of a target make one TLS probe of it every tls_every intervals between them") {
  Fleet fleet(4, small_roster(4));  // one country: each target has its 3 compatriots as witnesses
  std::vector<Asked> asked;
  fleet.probe_outcome = [&](std::uint32_t observer, const ProbeRequest& request) {
    asked.push_back({fleet.now, observer, request.target, request.tls});
    return ProbeFailure::none;
  };
  fleet.run_for(200'000);
  asked.clear();
  fleet.run_for(1'500'000);  // 25 minutes: 30 slots of 5 intervals
  const std::uint32_t every = AgentConfig{}.tls_every;
  REQUIRE(every == 5);
  std::map<std::string, std::vector<UnixMs>> tls_times;
  std::map<std::pair<std::uint32_t, std::string>, int> tls_by_witness, probes_by_witness;
  for (const Asked& a : asked) {
    ++probes_by_witness[{a.observer, a.target}];
    if (!a.tls) continue;
    tls_times[a.target].push_back(a.at);
    ++tls_by_witness[{a.observer, a.target}];
  }
  REQUIRE(tls_times.size() == 4);
  for (const auto& [target, times] : tls_times) {
    CAPTURE(target);
    // One per slot of 50 s: the next probe after each turn starts, so
    // 50 s apart give or take one interval (+-5%).
    CHECK(times.size() >= 29);
    CHECK(times.size() <= 31);
    for (std::size_t k = 1; k < times.size(); ++k) {
      CHECK(times[k] - times[k - 1] >= 39'000);
      CHECK(times[k] - times[k - 1] <= 61'000);
    }
  }
  // Each witness: one TLS probe in 3 x 5 = 15, the rest bare TCP.
  REQUIRE(tls_by_witness.size() == 12);
  for (const auto& [pair, tls] : tls_by_witness) {
    CAPTURE(pair.first);
    CAPTURE(pair.second);
    CHECK(tls >= 9);
    CHECK(tls <= 11);
    CHECK(probes_by_witness[pair] >= 136);  // 10 s +-5%, on 1 s ticks
  }
}

TEST_CASE("a compatriot's TLS failure makes the next probe TLS at its other witnesses, not abroad") {
  Fleet fleet(6, small_roster(6, 2));  // DE: s0 s2 s4, NL: s1 s3 s5; the full mesh
  std::vector<Asked> asked;
  bool blocked = false;
  // DE resets the TLS handshakes to s5 (an SNI block by one country).
  auto de = [](std::uint32_t observer) { return observer % 2 == 0; };
  fleet.probe_outcome = [&](std::uint32_t observer, const ProbeRequest& request) {
    asked.push_back({fleet.now, observer, request.target, request.tls});
    if (blocked && de(observer) && request.target == "s5" && request.tls) return ProbeFailure::tls_reset;
    return ProbeFailure::none;
  };
  fleet.run_for(200'000);
  asked.clear();
  blocked = true;
  fleet.run_for(300'000);
  auto first_failure = std::find_if(asked.begin(), asked.end(), [&](const Asked& a) {
    return de(a.observer) && a.target == "s5" && a.tls;
  });
  REQUIRE(first_failure != asked.end());
  const UnixMs failed_at = first_failure->at;
  // The first failure is reported at once (within the change gap of 2.5 s) and gossiped in seconds,
  // and its compatriots' next probe of s5 is TLS: within a probe interval,
  // not at their turn (up to 3 slots of 50 s away).
  for (std::uint32_t observer : {0u, 2u, 4u}) {
    CAPTURE(observer);
    auto tls = std::find_if(asked.begin(), asked.end(), [&](const Asked& a) {
      return a.observer == observer && a.target == "s5" && a.tls;
    });
    REQUIRE(tls != asked.end());
    CHECK(tls->at <= failed_at + 20'000);
    // From there on every probe of s5 is TLS and fails: the streak grows.
    for (auto a = tls; a != asked.end(); ++a) {
      if (a->observer == observer && a->target == "s5") CHECK(a->tls);
    }
    CHECK(fleet.agent(observer).ledger().find("s5")->fail_streak >= 3);
  }
  // NL's witnesses of s5 get through: its TLS probes come at their turns
  // only (one per 50 s slot between s1 and s3), not at DE's failures.
  int nl_tls = 0;
  for (const Asked& a : asked) nl_tls += !de(a.observer) && a.target == "s5" && a.tls;
  CHECK(nl_tls >= 5);
  CHECK(nl_tls <= 7);
  // Every node sees s5 unreachable: DE's 3 of 3 fail it.
  const auto snapshot = fleet.agent(1).verdicts();
  REQUIRE(snapshot != nullptr);
  auto s5 = std::find_if(snapshot->servers.begin(), snapshot->servers.end(),
                         [](const auto& v) { return v.id == "s5"; });
  REQUIRE(s5 != snapshot->servers.end());
  CHECK(s5->failing == 3);
}

}  // namespace
}  // namespace mesh::agent::testing

// TLS turns (node/agent/tls_turns.h): who of a country's witnesses makes
// the next TLS probe of a target, and what makes a probe TLS at once.
#include <doctest/doctest.h>

#include <algorithm>
#include <cstdlib>
#include <limits>
#include <map>
#include <set>
#include <string>

#include "node/agent/probe_schedule.h"
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

// Every slot of every witness of one target in one country over `span_ms`,
// in time order: (time, rank, whether it is its TLS turn).
struct Slot {
  UnixMs at;
  std::uint32_t rank;
  bool turn;
};
std::vector<Slot> country_slots(const std::string& id, std::uint32_t target, CountryPlace place,
                                std::uint32_t turns, std::uint32_t tls_every, DurationMs interval, UnixMs from,
                                DurationMs span_ms) {
  std::vector<Slot> slots;
  for (std::uint32_t rank = 0; rank < turns; ++rank) {
    const TlsTurn turn{rank, turns};
    const TurnGrid grid{turn, target, probe_base_phase(id), probe_phase(id, place, turn), interval, tls_every};
    for (UnixMs at = next_slot_ms(from, interval, grid.phase); at < from + span_ms; at += interval) {
      // Its turn is the slot itself: a probe at the slot (or within the
      // interval after it) is TLS.
      const UnixMs turn_at = latest_turn_ms(grid, at);
      CHECK(turn_at <= at);
      CHECK(latest_turn_ms(grid, at + interval - 1) == turn_at);
      CHECK((at - turn_at) % interval == 0);
      slots.push_back({at, rank, turn_at == at});
    }
  }
  std::sort(slots.begin(), slots.end(), [](const Slot& a, const Slot& b) { return a.at < b.at; });
  return slots;
}

TEST_CASE("turns: one TLS probe per tls_every intervals from a country, never further apart, going round its witnesses") {
  constexpr DurationMs kInterval = 60'000;
  for (std::uint32_t target : {0u, 1u, 7u, 999u}) {
    const std::string id = "t-" + std::to_string(target);
    for (const CountryPlace place : {CountryPlace{0, 1}, CountryPlace{2, 5}, CountryPlace{4, 5}}) {
      for (std::uint32_t turns : {1u, 2u, 3u, 5u}) {
        for (std::uint32_t every : {1u, 2u, 5u}) {
          CAPTURE(target);
          CAPTURE(place.index);
          CAPTURE(turns);
          CAPTURE(every);
          const std::vector<Slot> slots =
              country_slots(id, target, place, turns, every, kInterval, kStartMs, 86'400'000);
          // The slots of the country's witnesses are interval / turns apart
          // (give or take a millisecond of rounding).
          for (std::size_t k = 1; k < slots.size(); ++k) {
            CHECK(std::abs(slots[k].at - slots[k - 1].at - kInterval / turns) <= 1);
          }
          std::vector<UnixMs> turn_times;
          std::map<std::uint32_t, int> by_rank;
          std::uint32_t rank_changes = 0;
          std::uint32_t last_rank = turns;
          for (const Slot& slot : slots) {
            if (!slot.turn) continue;
            turn_times.push_back(slot.at);
            ++by_rank[slot.rank];
            rank_changes += last_rank != turns && slot.rank != last_rank;
            last_rank = slot.rank;
          }
          // Never more than tls_every intervals apart, never less than the
          // slot before that: s - 1 of s slots.
          REQUIRE(turn_times.size() > 2);
          const DurationMs most = static_cast<DurationMs>(every) * kInterval;
          const DurationMs least = turns * every == 1 ? kInterval : most - kInterval / turns;
          for (std::size_t k = 1; k < turn_times.size(); ++k) {
            CHECK(turn_times[k] - turn_times[k - 1] <= most + 1);
            CHECK(turn_times[k] - turn_times[k - 1] >= least - 1);
          }
          // kTurnRun in a row each, round every witness, as many each.
          const double runs = static_cast<double>(turn_times.size()) / kTurnRun;
          if (turns > 1) CHECK(rank_changes >= runs - 2);
          CHECK(by_rank.size() == turns);
          for (const auto& [rank, count] : by_rank) {
            CHECK(count >= static_cast<int>(turn_times.size() / turns) - kTurnRun);
            CHECK(count <= static_cast<int>(turn_times.size() / turns) + kTurnRun);
          }
        }
      }
    }
  }
  // Targets are shifted apart, so a node's turns do not fall together:
  // among 30 targets of which self is one of 3 witnesses, a few at a time.
  const CountryPlace place{1, 3};
  for (UnixMs now = kStartMs; now < kStartMs + 3 * kInterval; now += kInterval / 2) {
    int turned = 0;
    for (std::uint32_t target = 0; target < 30; ++target) {
      const std::string id = "t-" + std::to_string(target);
      const TlsTurn turn{1, 3};
      const TurnGrid grid{turn, target, probe_base_phase(id), probe_phase(id, place, turn), kInterval, 1};
      turned += now - latest_turn_ms(grid, now) < kInterval;
    }
    CHECK(turned >= 6);
    CHECK(turned <= 17);
  }
  // Times before 1970 are on the same grid.
  const TurnGrid early{{0, 1}, 0, 0, 0, kInterval, 1};
  CHECK(latest_turn_ms(early, -1) == -kInterval);
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
  fleet.run_for(1'500'000);  // 25 minutes: 150 intervals of 10 s
  const std::uint32_t every = AgentConfig{}.tls_every;
  REQUIRE(every == 1);
  std::map<std::string, std::vector<UnixMs>> tls_times;
  std::map<std::pair<std::uint32_t, std::string>, int> tls_by_witness, probes_by_witness;
  for (const Asked& a : asked) {
    ++probes_by_witness[{a.observer, a.target}];
    if (!a.tls) continue;
    tls_times[a.target].push_back(a.at);
    ++tls_by_witness[{a.observer, a.target}];
  }
  REQUIRE(tls_times.size() == 4);
  // The three witnesses' slots are 3.3 s apart; of every 3 x kTurnRun - 1
  // of them, kTurnRun are turns, 3 slots apart and the last 2 before the
  // next run: 150 x 12 / 11 in 150 intervals.
  const double turns = 150.0 * 3 * kTurnRun / (3 * kTurnRun - 1);
  for (const auto& [target, times] : tls_times) {
    CAPTURE(target);
    CHECK(times.size() >= turns - 3);
    CHECK(times.size() <= turns + 3);
    for (std::size_t k = 1; k < times.size(); ++k) {
      CHECK(times[k] - times[k - 1] >= 5'600);   // 2 slots, on 1 s ticks
      CHECK(times[k] - times[k - 1] <= 11'000);  // one interval
    }
  }
  // Each witness: a third of them, the rest bare TCP.
  REQUIRE(tls_by_witness.size() == 12);
  for (const auto& [pair, tls] : tls_by_witness) {
    CAPTURE(pair.first);
    CAPTURE(pair.second);
    CHECK(tls >= turns / 3 - 2 * kTurnRun);
    CHECK(tls <= turns / 3 + 2 * kTurnRun);
    CHECK(probes_by_witness[pair] >= 146);  // 10 s, on 1 s ticks
    CHECK(probes_by_witness[pair] <= 151);
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
  // only (2 x kTurnRun of every 4 x kTurnRun - 2 slots of s1 and s3, 5 s
  // apart: 30 x 8 / 7 in 30 intervals), not at DE's failures.
  int nl_tls = 0;
  for (const Asked& a : asked) nl_tls += !de(a.observer) && a.target == "s5" && a.tls;
  const double nl_turns = 30.0 * 2 * kTurnRun / (2 * kTurnRun - 1);
  CHECK(nl_tls >= nl_turns - 3);
  CHECK(nl_tls <= nl_turns + 3);
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

// Mass blocks, partitions and the far side of a border (docs/VERDICTS.md,
// "Borders"): a country blocking any share of the fleet marks exactly the
// blocked servers, split by that country, and never its own; a partition
// that cuts through countries marks nothing and says the evidence is
// insufficient; a single broken observer is still discarded.
#include <doctest/doctest.h>

#include <algorithm>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "tests/verdict/fixtures.h"
#include "verdict/engine.h"

using namespace mesh;
using namespace mesh::verdict;
using namespace mesh::verdict::testing;

namespace {

constexpr UnixMs kNow = kT0 + 600'000;
constexpr UnixMs kReportAt = kNow - 30'000;
constexpr std::uint32_t kPerCountry = 6;
const std::vector<std::string> kCountries = {"AE", "DE", "FR", "NL", "US"};  // AE blocks

// 5 countries of 6 servers, 3 witnesses per target and country.
Roster fleet_30() { return make_roster(kCountries, std::vector<std::uint32_t>(5, kPerCountry), 3); }

template <class Reachable>
std::vector<ObservedReport> reports_of(const Roster& roster, Reachable reachable) {
  auto n = static_cast<std::uint32_t>(roster.servers.size());
  std::vector<std::uint32_t> all;
  for (std::uint32_t t = 0; t < n; ++t) all.push_back(t);
  std::vector<ObservedReport> reports;
  for (std::uint32_t o = 0; o < n; ++o) {
    reports.push_back(report_probing(o, kReportAt, roster.version, all, [&](std::uint32_t t) {
      return reachable(o, t) ? 0u : 5u;
    }));
  }
  return reports;
}

std::uint32_t country_of(std::uint32_t server) { return server / kPerCountry; }

// `count` servers outside country 0, drawn with `seed`.
std::set<std::uint32_t> draw_outside_a(std::uint32_t count, std::uint64_t seed) {
  std::vector<std::uint32_t> outside;
  for (std::uint32_t s = kPerCountry; s < 5 * kPerCountry; ++s) outside.push_back(s);
  std::mt19937_64 rng(seed);
  std::shuffle(outside.begin(), outside.end(), rng);
  return {outside.begin(), outside.begin() + count};
}

std::uint32_t server_explained_total(const Evaluation& evaluation) {
  std::uint32_t total = 0;
  for (const ServerVerdict& verdict : evaluation.servers) total += verdict.explained;
  return total;
}

const CountryTally* row_of(const ServerVerdict& verdict, const std::string& country) {
  for (const CountryTally& row : verdict.by_country) {
    if (row.country == country) return &row;
  }
  return nullptr;
}

}  // namespace

TEST_CASE("one country blocking 1 server to 80% of the rest: exactly those, split by it") {
  for (std::uint32_t blocked_count : {1u, 5u, 12u, 14u, 19u}) {  // 4% .. 79% of the 24 abroad
    for (std::uint64_t seed = 1; seed <= 6; ++seed) {
      CAPTURE(blocked_count);
      CAPTURE(seed);
      const Roster roster = fleet_30();
      const std::set<std::uint32_t> blocked = draw_outside_a(blocked_count, seed);
      // Both directions: AE's servers and the blocked ones cannot connect.
      auto reachable = [&](std::uint32_t o, std::uint32_t t) {
        bool o_in_a = country_of(o) == 0;
        bool t_in_a = country_of(t) == 0;
        return !((o_in_a && blocked.count(t)) || (t_in_a && blocked.count(o)));
      };
      const Evaluation evaluation = evaluate(roster, reports_of(roster, reachable), kNow);
      CHECK(evaluation.unreliable_observers.empty());
      CHECK_FALSE(evaluation.partitioned);
      std::uint32_t explained_in_a = 0;
      for (std::uint32_t s = 0; s < roster.servers.size(); ++s) {
        const ServerVerdict& verdict = evaluation.servers[s];
        CAPTURE(verdict.id);
        if (blocked.count(s)) {
          CHECK(verdict.status == ServerStatus::unreachable);
          const CountryTally* ae = row_of(verdict, "AE");
          REQUIRE(ae != nullptr);
          CHECK(ae->failing == ae->eligible);
          CHECK(ae->failing >= 2);
          CHECK(verdict.failing == ae->failing);  // nobody else fails it
          CHECK(verdict.eligible == 15);            // 3 witnesses in each of 5 countries
          CHECK(verdict.quorum == 3);
          CHECK(verdict.explained == 0);
        } else {
          CHECK(verdict.status == ServerStatus::ok);
          CHECK(verdict.caption.empty());
          CHECK_FALSE(verdict.flags.insufficient_evidence);
          if (country_of(s) == 0) {
            // The blocked servers' failures of AE's servers are its border seen
            // from the other side.
            CHECK(verdict.failing == 0);
            explained_in_a += verdict.explained;
          }
        }
      }
      CHECK(explained_in_a > 0);
    }
  }
}

TEST_CASE("the far side needs the broader border: a whole country blocked with others") {
  // AE blocks all of DE (servers 6..11) and 4 servers of FR: DE's servers
  // fail every AE server too, but AE fails 10 servers abroad and DE only 6.
  const Roster roster = fleet_30();
  std::set<std::uint32_t> blocked = {6, 7, 8, 9, 10, 11, 12, 13, 14, 15};
  auto reachable = [&](std::uint32_t o, std::uint32_t t) {
    return !((country_of(o) == 0 && blocked.count(t)) || (country_of(t) == 0 && blocked.count(o)));
  };
  const Evaluation evaluation = evaluate(roster, reports_of(roster, reachable), kNow);
  for (std::uint32_t s = 0; s < roster.servers.size(); ++s) {
    CAPTURE(evaluation.servers[s].id);
    CHECK((evaluation.servers[s].status == ServerStatus::unreachable) == (blocked.count(s) == 1));
  }
}

TEST_CASE("two countries cut from each other alone: neither side is judged") {
  // Equal borders (6 servers each way): the data cannot say who blocks whom.
  const Roster roster = fleet_30();
  auto reachable = [&](std::uint32_t o, std::uint32_t t) {
    std::uint32_t a = country_of(o), b = country_of(t);
    return !((a == 0 && b == 1) || (a == 1 && b == 0));
  };
  const Evaluation evaluation = evaluate(roster, reports_of(roster, reachable), kNow);
  for (const ServerVerdict& verdict : evaluation.servers) {
    CAPTURE(verdict.id);
    CHECK(verdict.status == ServerStatus::ok);
    CHECK(verdict.failing == 0);
  }
  CHECK(server_explained_total(evaluation) > 0);
}

TEST_CASE("a partition that cuts through countries marks nothing: the evidence is insufficient") {
  for (std::uint32_t side : {15u, 10u, 20u}) {
    for (std::uint64_t seed = 1; seed <= 10; ++seed) {
      CAPTURE(side);
      CAPTURE(seed);
      const Roster roster = fleet_30();
      std::vector<std::uint32_t> order(roster.servers.size());
      for (std::uint32_t i = 0; i < order.size(); ++i) order[i] = i;
      std::mt19937_64 rng(seed * 7919);
      std::shuffle(order.begin(), order.end(), rng);
      std::set<std::uint32_t> left(order.begin(), order.begin() + side);
      // Skip a draw that happens to follow country lines exactly: that is a
      // block by those countries (the test above).
      std::set<std::uint32_t> left_countries, right_countries;
      for (std::uint32_t s = 0; s < order.size(); ++s) {
        (left.count(s) ? left_countries : right_countries).insert(country_of(s));
      }
      bool cuts_a_country = false;
      for (std::uint32_t c : left_countries) cuts_a_country |= right_countries.count(c) == 1;
      REQUIRE(cuts_a_country);
      auto reachable = [&](std::uint32_t o, std::uint32_t t) {
        return left.count(o) == left.count(t);
      };
      const Evaluation evaluation = evaluate(roster, reports_of(roster, reachable), kNow);
      std::uint32_t insufficient = 0;
      for (const ServerVerdict& verdict : evaluation.servers) {
        CAPTURE(verdict.id);
        CHECK(verdict.status == ServerStatus::ok);
        CHECK_FALSE(verdict.flags.unreachable);
        if (verdict.flags.insufficient_evidence) ++insufficient;
      }
      CHECK(insufficient > 0);
      CHECK(evaluation.partitioned);
      for (const RouteMembership& route : evaluation.routes) CHECK_FALSE(route.degraded);
    }
  }
}

TEST_CASE("a broken observer is still discarded while a country block is on") {
  const Roster roster = fleet_30();
  const std::uint32_t blocked = 20;  // nl-3
  const std::uint32_t broken = 8;    // de-3: cannot reach every second server
  auto reachable = [&](std::uint32_t o, std::uint32_t t) {
    if ((country_of(o) == 0 && t == blocked) || (country_of(t) == 0 && o == blocked)) return false;
    if (o == broken && t % 2 == 1) return false;
    return true;
  };
  const Evaluation evaluation = evaluate(roster, reports_of(roster, reachable), kNow);
  CHECK(evaluation.unreliable_observers == std::vector<std::string>{"de-3"});
  for (std::uint32_t s = 0; s < roster.servers.size(); ++s) {
    CAPTURE(evaluation.servers[s].id);
    CHECK((evaluation.servers[s].status == ServerStatus::unreachable) == (s == blocked));
    CHECK_FALSE(evaluation.servers[s].flags.insufficient_evidence);
  }
}

TEST_CASE("the quorum counts every witness with a result: discards never lower it") {
  // 8 servers in one country each; 6 of the 7 witnesses of s0 are broken
  // (unreliable) and the seventh fails s0: one trusted opinion, no verdict.
  Roster roster = make_roster({"AT", "BE", "CH", "DE", "ES", "FR", "GB", "HU"},
                              {1, 1, 1, 1, 1, 1, 1, 1});
  auto reachable = [&](std::uint32_t o, std::uint32_t t) {
    if (o >= 1 && o <= 6) return t == 0 || t == 7 || t == o;  // fails 5 of 7 targets
    if (o == 7) return t != 0;
    return true;
  };
  const Evaluation evaluation = evaluate(roster, reports_of(roster, reachable), kNow);
  const ServerVerdict& verdict = evaluation.servers[0];
  CHECK(evaluation.unreliable_observers.size() == 6);
  CHECK(verdict.discarded == 6);
  CHECK(verdict.failing == 1);
  CHECK(verdict.eligible == 1);
  CHECK(verdict.quorum == 3);
  CHECK_FALSE(verdict.flags.unreachable);
  CHECK(verdict.flags.insufficient_evidence);
}

TEST_CASE("a quarter of the fleet silent at once is a split, not an outage: no verdict") {
  // s0..s6 (7 of 30, under a quarter) are powered off: each is unreachable.
  // With one more silent (8 of 30, over a quarter) this node may hear only
  // its side of a split: nothing is unreachable, the failures are shown as
  // insufficient evidence, and the silent servers stay in rotation.
  for (std::uint32_t silent : {7u, 8u}) {
    CAPTURE(silent);
    const Roster roster = fleet_30();
    auto reachable = [&](std::uint32_t, std::uint32_t t) { return t >= silent; };
    std::vector<ObservedReport> reports = reports_of(roster, reachable);
    reports.erase(reports.begin(), reports.begin() + silent);
    const Evaluation evaluation = evaluate(roster, reports, kNow);
    CHECK(evaluation.partitioned == (silent == 8));
    for (std::uint32_t s = 0; s < silent; ++s) {
      const ServerVerdict& verdict = evaluation.servers[s];
      CAPTURE(verdict.id);
      CHECK(verdict.flags.no_data);
      CHECK(verdict.flags.unreachable == (silent == 7));
      CHECK(verdict.flags.insufficient_evidence == (silent == 8));
    }
  }
}

TEST_CASE("a lifted block: the far side stands while the border's witnesses have only just recovered") {
  const int kStale = 8;  // of the 19: with all 19 the fleet looks split (no verdicts either way)
  // AE blocked 19 of the 24 servers abroad and has just lifted the block:
  // AE's witnesses already get through to them (their next probe did), while
  // the blocked servers' reports still show AE's servers failing (their next
  // probe of AE is yet to come). Those failures are the border seen from
  // the other side until both sides have recovered.
  std::uint32_t seeds_blaming_a = 0;
  for (std::uint64_t seed = 1; seed <= 6; ++seed) {
    CAPTURE(seed);
    const Roster roster = fleet_30();
    const std::set<std::uint32_t> blocked = draw_outside_a(19, seed);
    // The blocked servers whose report still shows AE failing: the first
    // `stale` (in server order); the others have reported their recovery.
    std::set<std::uint32_t> still_failing(blocked.begin(), std::next(blocked.begin(), kStale));
    auto reachable = [&](std::uint32_t o, std::uint32_t t) {
      return !(country_of(t) == 0 && still_failing.count(o));  // only the far side still fails
    };
    std::vector<ObservedReport> reports = reports_of(roster, reachable);
    std::vector<ObservedReport> flagged = reports;
    for (std::uint32_t o = 0; o < kPerCountry; ++o) {
      for (ProbeResult& result : flagged[o].report.view.results) {
        if (blocked.count(result.target)) result.recovered = true;
      }
    }
    auto explained_in_a = [](const Evaluation& evaluation) {
      std::uint32_t explained = 0;
      for (std::uint32_t s = 0; s < kPerCountry; ++s) explained += evaluation.servers[s].explained;
      return explained;
    };
    const Evaluation evaluation = evaluate(roster, flagged, kNow);
    CHECK_FALSE(evaluation.partitioned);
    for (std::uint32_t s = 0; s < roster.servers.size(); ++s) {
      CAPTURE(evaluation.servers[s].id);
      CHECK(evaluation.servers[s].status == ServerStatus::ok);
    }
    CHECK(explained_in_a(evaluation) > 0);
    // Without the flags the same failures are votes (nothing explains
    // them), and in some draws they make one of AE's own servers
    // unreachable: the transient the flag closes.
    const Evaluation unflagged = evaluate(roster, reports, kNow);
    CHECK(explained_in_a(unflagged) == 0);
    for (std::uint32_t s = 0; s < kPerCountry; ++s) {
      if (unflagged.servers[s].status == ServerStatus::unreachable) {
        ++seeds_blaming_a;
        break;
      }
    }
  }
  CHECK(seeds_blaming_a > 0);
}

// Marks the failing results of an observer for the targets `which` says
// as unanswered since their last probe (silence claims).
template <class Which>
void claim_silence(ObservedReport& observed, Which which) {
  for (ProbeResult& result : observed.report.view.results) {
    if (result.fail_streak > 0 && which(result.target)) result.unanswered_since_ms = result.last_probe_ms;
  }
}

TEST_CASE("a healed split: failures across it are silent claims, no votes once the far side speaks") {
  // A split cut 10 servers of AE, DE, FR and NL from the other 20 (every
  // US server among them) and has just healed. Every observer has probed
  // across it again except the six US servers, whose reports still fail
  // the 10 (their next probes are yet to come). They had not heard from
  // the 10 since those failures began (the split cut gossip too), so they
  // claim silence; the 10 have reported since the US reports were signed:
  // the claims no longer hold, and the results are no votes. Read as
  // answered failures (a living target that cannot be reached), the same
  // evidence is a US border against the 10, and they would be unreachable.
  const Roster roster = fleet_30();
  const std::uint32_t us = 4;
  for (std::uint64_t seed = 1; seed <= 6; ++seed) {
    CAPTURE(seed);
    std::vector<std::uint32_t> outside_us;
    for (std::uint32_t s = 0; s < us * kPerCountry; ++s) outside_us.push_back(s);
    std::mt19937_64 rng(seed);
    std::set<std::uint32_t> left;
    do {  // 10 of AE, DE, FR, NL, and each of them on both sides
      std::shuffle(outside_us.begin(), outside_us.end(), rng);
      left = {outside_us.begin(), outside_us.begin() + 10};
    } while ([&] {
      for (std::uint32_t c = 0; c < us; ++c) {
        const auto here = std::count_if(left.begin(), left.end(),
                                        [&](std::uint32_t s) { return country_of(s) == c; });
        if (here == 0 || here == static_cast<long>(kPerCountry)) return true;
      }
      return false;
    }());
    auto across = [&](std::uint32_t o, std::uint32_t t) { return left.count(o) != left.count(t); };
    auto stale = [&](std::uint32_t o) { return country_of(o) == us; };
    std::vector<ObservedReport> claimed = reports_of(roster, [&](std::uint32_t o, std::uint32_t t) {
      return !(stale(o) && across(o, t));
    });
    for (std::uint32_t s : left) claimed[s].timestamp_ms = kReportAt + 5'000;  // spoke since the heal
    std::vector<ObservedReport> answered = claimed;
    for (std::uint32_t o = 0; o < roster.servers.size(); ++o) {
      if (stale(o)) claim_silence(claimed[o], [&](std::uint32_t t) { return across(o, t); });
    }
    const Evaluation evaluation = evaluate(roster, claimed, kNow);
    for (const ServerVerdict& verdict : evaluation.servers) {
      CAPTURE(verdict.id);
      CHECK(verdict.status == ServerStatus::ok);
      CHECK(verdict.failing == 0);
    }
    const Evaluation plain = evaluate(roster, answered, kNow);
    for (std::uint32_t s : left) CHECK(plain.servers[s].status == ServerStatus::unreachable);
  }
}

TEST_CASE("a split heals: the far side's last report still to land is no server powered off") {
  // As in tests/e2e scenario 12: all of country 0 and the first server of
  // country 1 (server 6) were split from the rest, and the split has just
  // healed. Here (on the right) every report has landed since, each side's
  // failures of the other are silence claims, but the report of server 6
  // is still on its way: the claims against it hold. Its own side reached
  // it after its last word we hold: it is alive, only unheard. It was
  // unreachable for a moment at the heal of that scenario.
  const Roster roster = fleet_30();
  const std::uint32_t late = kPerCountry;
  auto side = [&](std::uint32_t s) { return country_of(s) == 0 || s == late; };
  std::vector<ObservedReport> reports = reports_of(roster, [&](std::uint32_t o, std::uint32_t t) {
    return side(o) == side(t);
  });
  for (std::uint32_t o = 0; o < roster.servers.size(); ++o) {
    claim_silence(reports[o], [&](std::uint32_t t) { return side(o) != side(t); });
  }
  const std::vector<ObservedReport> heard = reports;
  reports[late].timestamp_ms = kReportAt - 60'000;  // its last word held here: before the split
  const Evaluation landing = evaluate(roster, reports, kNow);
  CAPTURE(landing.servers[late].failing);
  CHECK(landing.servers[late].status == ServerStatus::ok);
  CHECK(landing.servers[late].flags.insufficient_evidence);
  // Its report lands: the claims are pending, no vote at all.
  const Evaluation landed = evaluate(roster, heard, kNow);
  CHECK(landed.servers[late].status == ServerStatus::ok);
  CHECK(landed.servers[late].failing == 0);
  // Nobody reached it since its last word: powered off, unreachable.
  std::vector<ObservedReport> off = reports_of(roster, [&](std::uint32_t, std::uint32_t t) { return t != late; });
  off[late].timestamp_ms = kReportAt - 60'000;
  for (ObservedReport& observed : off) claim_silence(observed, [&](std::uint32_t t) { return t == late; });
  CHECK(evaluate(roster, off, kNow).servers[late].status == ServerStatus::unreachable);
}

TEST_CASE("a split's far side is cut off from its first failed probe: partitioned, no verdict") {
  // 12 of 30 servers (AE and DE) split from the rest; each side's failures
  // of the other are silent claims on their way (one failed probe), and the
  // other side's last reports, from before the split, still say they reach
  // everyone. A quarter of the fleet is cut off: partitioned. A single
  // powered-off server is cut off too, and is unreachable.
  const Roster roster = fleet_30();
  auto side = [](std::uint32_t s) { return country_of(s) <= 1; };
  std::vector<ObservedReport> reports = reports_of(roster, [&](std::uint32_t o, std::uint32_t t) {
    return side(o) == side(t);
  });
  for (std::uint32_t o = 0; o < roster.servers.size(); ++o) {
    const bool left = side(o);
    // Only this side's reports are fresh here (we are on the right); the
    // left's are from before the split: every result succeeds.
    if (left) {
      reports[o] = report_probing(o, kReportAt - 60'000, roster.version, {}, [](std::uint32_t) { return 0u; });
      continue;
    }
    for (ProbeResult& result : reports[o].report.view.results) {
      if (side(result.target)) {
        result.fail_streak = 5;
        result.reason = ProbeFailure::tcp_timeout;
        result.ok_streak = 0;
        result.last_ok_ms = 0;
        result.unanswered_since_ms = result.last_probe_ms;
      }
    }
  }
  const Evaluation split = evaluate(roster, reports, kNow);
  CHECK(split.partitioned);
  for (const ServerVerdict& verdict : split.servers) CHECK(verdict.status != ServerStatus::unreachable);

  // One server off: its witnesses claim silence, it is unreachable.
  std::vector<ObservedReport> off = reports_of(roster, [](std::uint32_t, std::uint32_t t) { return t != 7; });
  off[7].timestamp_ms = kReportAt - 60'000;
  for (ObservedReport& observed : off) claim_silence(observed, [](std::uint32_t t) { return t == 7; });
  const Evaluation powered_off = evaluate(roster, off, kNow);
  CHECK_FALSE(powered_off.partitioned);
  CHECK(powered_off.servers[7].status == ServerStatus::unreachable);
}

TEST_CASE("a split: an observer of our side unheard since before it does not reach the far side") {
  // As in tests/e2e scenario 12 (CI, 2026-12-05) and its meshsim replay:
  // 12 of 30 servers (AE and DE) split from the rest; we are on the right,
  // and the overlay left us cut off from part of our own side (US) for a
  // while (its links across the split had not yet been found dead), so the
  // last reports of US we hold are from before the split: they reached
  // everyone then. The left side's last words held here are older still,
  // but for two of them, which spoke a moment later.
  // That old report is no evidence that the far side is alive now: its
  // successes were probed before the silence claims began. Read as
  // evidence, it made 10 of the 12 "alive, only unheard", the two cut off
  // alone looked powered off, and they were unreachable.
  const Roster roster = fleet_30();
  auto side = [](std::uint32_t s) { return country_of(s) <= 1; };
  auto unheard = [](std::uint32_t s) { return country_of(s) == 4; };  // US, on our side
  std::vector<ObservedReport> reports = reports_of(roster, [&](std::uint32_t o, std::uint32_t t) {
    return side(o) == side(t);
  });
  auto all_ok = [](std::uint32_t) { return 0u; };
  std::vector<std::uint32_t> everyone;
  for (std::uint32_t t = 0; t < roster.servers.size(); ++t) everyone.push_back(t);
  for (std::uint32_t o = 0; o < roster.servers.size(); ++o) {
    if (side(o)) {
      const UnixMs last_word = o == 3 || o == 9 ? kReportAt - 45'000 : kReportAt - 60'000;
      reports[o] = report_probing(o, last_word, roster.version, everyone, all_ok);
    } else if (unheard(o)) {
      reports[o] = report_probing(o, kReportAt - 50'000, roster.version, everyone, all_ok);
    } else {
      claim_silence(reports[o], [&](std::uint32_t t) { return side(t); });
    }
  }
  const Evaluation split = evaluate(roster, reports, kNow);
  CHECK(split.partitioned);
  for (const ServerVerdict& verdict : split.servers) {
    CAPTURE(verdict.id);
    CHECK(verdict.status != ServerStatus::unreachable);
  }
}

TEST_CASE("two censors: each finds its blocks, though the other blocks some of its witnesses") {
  // AE (the first country) blocks DE-4..DE-6 and FR-1, FR-2; DE blocks
  // AE-1..AE-3 and US-1: both ways at the IP level. AE's witnesses of the DE
  // servers it blocks include some that DE blocks in turn (AE-1..3): their
  // failures are also the far side of DE's border against them, but the
  // other AE witnesses, and AE's targets' own results, show AE's border.
  const Roster roster = fleet_30();
  auto id = [](std::uint32_t country, std::uint32_t nth) { return country * kPerCountry + nth; };
  const std::set<std::uint32_t> by_ae = {id(1, 3), id(1, 4), id(1, 5), id(2, 0), id(2, 1)};
  const std::set<std::uint32_t> by_de = {id(0, 0), id(0, 1), id(0, 2), id(4, 0)};
  auto cut = [&](std::uint32_t a, std::uint32_t b) {
    auto one_way = [&](std::uint32_t x, std::uint32_t y) {
      return (country_of(x) == 0 && by_ae.count(y)) || (country_of(x) == 1 && by_de.count(y));
    };
    return one_way(a, b) || one_way(b, a);
  };
  const std::vector<ObservedReport> reports =
      reports_of(roster, [&](std::uint32_t o, std::uint32_t t) { return !cut(o, t); });
  const Evaluation evaluation = evaluate(roster, reports, kNow);
  CHECK_FALSE(evaluation.partitioned);
  for (std::uint32_t s = 0; s < roster.servers.size(); ++s) {
    CAPTURE(roster.servers[s].id);
    const bool blocked = by_ae.count(s) || by_de.count(s);
    CHECK(evaluation.servers[s].status == (blocked ? ServerStatus::unreachable : ServerStatus::ok));
  }
}

TEST_CASE("a mass block: a success reported before the blocking country's streaks began is no answer to them") {
  // AE blocks 19 of the 24 servers abroad, from a minute ago. Every node has
  // reported since, but AE's server 0, which is well and reports on change
  // and heartbeat only: its report held is 2.5 minutes old, from before the
  // block, and gets through to everything. Its compatriots got through to
  // the blocked servers later than that and have failed them since, so its
  // success is outdated (docs/VERDICTS.md, rule 6): it does not keep AE from
  // holding against the servers it blocks, their failures of AE's servers
  // are the far side, and no AE server is unreachable (meshsim
  // mass-block-80 at N = 100 in 5 countries, seeds 1-3, until 2026-12-06:
  // one check 30 s after the block). Until it probes them again it still
  // counts in the blocked servers' own verdicts (rule 7 reads every result).
  constexpr UnixMs kBlockAt = kReportAt - 60'000;
  std::uint32_t seeds_blaming_a = 0;
  for (std::uint64_t seed = 1; seed <= 6; ++seed) {
    CAPTURE(seed);
    const Roster roster = fleet_30();
    const std::set<std::uint32_t> blocked = draw_outside_a(19, seed);
    auto reachable = [&](std::uint32_t o, std::uint32_t t) {
      return !((country_of(o) == 0 && blocked.count(t)) || (country_of(t) == 0 && blocked.count(o)));
    };
    std::vector<ObservedReport> reports = reports_of(roster, reachable);
    std::vector<std::uint32_t> all;
    for (std::uint32_t t = 0; t < roster.servers.size(); ++t) all.push_back(t);
    reports[0] = report_probing(0, kNow - 150'000, roster.version, all, [](std::uint32_t) { return 0u; });
    auto since_block = [&](std::vector<ObservedReport> held, UnixMs last_ok_ms) {
      for (ObservedReport& observed : held) {
        for (ProbeResult& result : observed.report.view.results) {
          if (result.fail_streak > 0) result.last_ok_ms = last_ok_ms;
        }
      }
      return evaluate(roster, held, kNow);
    };
    const Evaluation evaluation = since_block(reports, kBlockAt - 30'000);
    CHECK(evaluation.unreliable_observers.empty());
    CHECK_FALSE(evaluation.partitioned);
    for (std::uint32_t s = 0; s < kPerCountry; ++s) {
      CAPTURE(evaluation.servers[s].id);
      CHECK(evaluation.servers[s].status == ServerStatus::ok);
      CHECK(evaluation.servers[s].failing == 0);
      CHECK(evaluation.servers[s].explained > 0);
    }
    // Failing results that never got through (last_ok_ms 0) leave no
    // success outdated: server 0's old success then reads as AE getting
    // through, and in some draws the far side's failures make one of AE's
    // own servers unreachable: the false verdict this rule closes.
    const Evaluation unordered = since_block(reports, 0);
    for (std::uint32_t s = 0; s < kPerCountry; ++s) {
      if (unordered.servers[s].status == ServerStatus::unreachable) {
        ++seeds_blaming_a;
        break;
      }
    }
  }
  CHECK(seeds_blaming_a > 0);
}

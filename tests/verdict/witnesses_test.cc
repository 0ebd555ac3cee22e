// Witness assignment: coverage per country, even load, determinism,
// re-draw per epoch, full-mesh degradation, warm-up windows.
#include <doctest/doctest.h>

#include <algorithm>
#include <set>

#include "record/fleet_scale.h"
#include "tests/verdict/fixtures.h"
#include "verdict/hash.h"
#include "verdict/witnesses.h"

using namespace mesh;
using namespace mesh::verdict;
using mesh::verdict::testing::make_roster;

namespace {

// Every target has min(k, servers of the country other than itself)
// witnesses in every country, none of them itself, and the two indexes agree.
void check_coverage(const Roster& roster, const WitnessPlan& plan) {
  Fleet fleet = build_fleet(roster);
  std::uint32_t k = roster.params.witnesses_per_country;
  for (std::uint32_t t = 0; t < fleet.server_count; ++t) {
    std::vector<std::uint32_t> per_country(fleet.countries.size(), 0);
    for (std::uint32_t w : plan.witnesses(t)) {
      CHECK(w != t);
      ++per_country[fleet.country_of[w]];
      CHECK(plan.is_witness(w, t));
      auto targets = plan.targets(w);
      CHECK(std::binary_search(targets.begin(), targets.end(), t));
    }
    for (std::uint32_t c = 0; c < fleet.countries.size(); ++c) {
      std::uint32_t candidates = static_cast<std::uint32_t>(fleet.members_of_country[c].size()) -
                                 (fleet.country_of[t] == c ? 1 : 0);
      CHECK(per_country[c] == std::min(k, candidates));
    }
  }
}

// Load (targets per observer) within +-20% of its country's mean.
void check_load(const Roster& roster, const WitnessPlan& plan) {
  Fleet fleet = build_fleet(roster);
  for (const auto& members : fleet.members_of_country) {
    std::uint64_t total = 0;
    for (std::uint32_t o : members) total += plan.targets(o).size();
    double mean = static_cast<double>(total) / static_cast<double>(members.size());
    for (std::uint32_t o : members) {
      double load = static_cast<double>(plan.targets(o).size());
      CHECK(load >= mean * 0.8);
      CHECK(load <= mean * 1.2);
    }
  }
}

}  // namespace

TEST_CASE("hash functions are pinned (they are part of the protocol)") {
  CHECK(fnv1a64("") == 0xcbf29ce484222325ull);
  CHECK(fnv1a64("a") == 0xaf63dc4c8601ec8cull);
  CHECK(splitmix64(0) == 0xe220a8397b1dcdafull);
}

TEST_CASE("witnesses_per_country 0 and small fleets are the full mesh") {
  Roster zero = make_roster({"DE", "RU"}, {10, 10}, 0);
  CHECK(plan_witnesses(zero, 5).full_mesh);
  Roster small = make_roster({"DE", "NL", "RU"}, {3, 2, 3}, 3);
  WitnessPlan plan = plan_witnesses(small, 5);
  CHECK(plan.full_mesh);
  CHECK(plan.witnesses(0).size() == 7);
  CHECK(plan.targets(7) == std::vector<std::uint32_t>{0, 1, 2, 3, 4, 5, 6});
  CHECK_FALSE(plan.is_witness(3, 3));
  Roster one_more = make_roster({"DE", "RU"}, {4, 3}, 3);
  CHECK_FALSE(plan_witnesses(one_more, 5).full_mesh);
}

TEST_CASE("every target gets its witnesses in every country; load is even") {
  struct Case {
    std::vector<std::string> countries;
    std::vector<std::uint32_t> sizes;
    std::uint32_t k;
  };
  std::vector<Case> cases = {
      {{"DE", "NL", "RU", "US"}, {5, 5, 5, 5}, 3},
      {{"DE", "RU"}, {4, 3}, 3},
      {{"DE", "FI", "NL", "RU", "US"}, {60, 7, 33, 80, 20}, 3},
      {{"DE", "NL", "RU", "US"}, {250, 250, 250, 250}, 3},
      {{"DE", "RU", "US"}, {40, 41, 39}, 5},
  };
  for (const Case& c : cases) {
    Roster roster = make_roster(c.countries, c.sizes, c.k);
    for (std::uint64_t epoch : {0ull, 1ull, 472222ull}) {
      CAPTURE(epoch);
      WitnessPlan plan = plan_witnesses(roster, epoch);
      CHECK_FALSE(plan.full_mesh);
      check_coverage(roster, plan);
      check_load(roster, plan);
    }
  }
}

TEST_CASE("the plan is a function of the roster and the epoch only") {
  Roster roster = make_roster({"DE", "NL", "RU"}, {12, 9, 15}, 3);
  Roster copy = roster;
  WitnessPlan a = plan_witnesses(roster, 100);
  CHECK(a == plan_witnesses(copy, 100));  // another node, same inputs
  CHECK(a == plan_witnesses(roster, 100));
  WitnessPlan next = plan_witnesses(roster, 101);
  CHECK(a.witnesses_of_target != next.witnesses_of_target);  // re-drawn every epoch
  Roster renamed = roster;
  renamed.servers[0].id = "de-renamed";
  CHECK(a.witnesses_of_target != plan_witnesses(renamed, 100).witnesses_of_target);
  // Parameters that do not shape the assignment leave it alone.
  Roster tuned = roster;
  tuned.params.fail_streak = 5;
  CHECK(a.witnesses_of_target == plan_witnesses(tuned, 100).witnesses_of_target);
}

TEST_CASE("no pair is starved: across epochs every in-country pair gets drawn") {
  Roster roster = make_roster({"DE", "RU"}, {20, 20}, 3);
  std::set<std::pair<std::uint32_t, std::uint32_t>> seen;
  for (std::uint64_t epoch = 0; epoch < 200; ++epoch) {
    WitnessPlan plan = plan_witnesses(roster, epoch);
    for (std::uint32_t t = 0; t < 40; ++t) {
      for (std::uint32_t w : plan.witnesses(t)) seen.emplace(w, t);
    }
  }
  CHECK(seen.size() == 40u * 39u);
}

TEST_CASE("epoch arithmetic and the warm-up windows") {
  Parameters params;  // epoch 1 h, probe every 60 s, fail_streak 3
  constexpr std::size_t n = 100;  // up to 128 servers the epoch is epoch_ms
  CHECK(warmup_ms(params, n) == 5 * 60'000);
  CHECK(epoch_of(0, params, n) == 0);
  CHECK(epoch_of(-5, params, n) == 0);
  CHECK(epoch_of(3'599'999, params, n) == 0);
  CHECK(epoch_of(3'600'000, params, n) == 1);
  CHECK(epoch_start_ms(2, params, n) == 7'200'000);
  CHECK_FALSE(in_warmup_before_switch(3'600'000 - 300'001, params, n));
  CHECK(in_warmup_before_switch(3'600'000 - 300'000, params, n));
  CHECK(in_warmup_before_switch(3'599'999, params, n));
  CHECK_FALSE(in_warmup_before_switch(3'600'000, params, n));
  CHECK(in_grace_after_switch(3'600'000, params, n));
  CHECK(in_grace_after_switch(3'600'000 + 299'999, params, n));
  CHECK_FALSE(in_grace_after_switch(3'600'000 + 300'000, params, n));
  CHECK_FALSE(in_grace_after_switch(10, params, n));  // epoch 0 has no predecessor
  Parameters short_epoch = params;
  short_epoch.epoch_ms = 120'000;
  CHECK(warmup_ms(short_epoch, n) == 120'000);
  Parameters never = params;
  never.epoch_ms = 0;
  CHECK(epoch_of(9'999'999'999, never, n) == 0);
  CHECK_FALSE(in_warmup_before_switch(5, never, n));
  CHECK(epoch_of(9'999'999'999, never, 1000) == 0);
}

TEST_CASE("above 128 servers an epoch is longer in proportion, at most a day, and its windows follow") {
  Parameters params;  // epoch 1 h
  CHECK(effective_epoch_ms(params, 128) == 3'600'000);
  CHECK(effective_epoch_ms(params, 256) == 7'200'000);
  CHECK(effective_epoch_ms(params, 1000) == 28'125'000);  // 7 h 48 min 45 s
  CHECK(effective_epoch_ms(params, 3000) == 84'375'000);  // 23 h 26 min 15 s
  CHECK(effective_epoch_ms(params, 4096) == 86'400'000);  // capped at a day
  Parameters long_epoch = params;
  long_epoch.epoch_ms = 2 * 86'400'000;  // an operator's longer epoch is kept
  CHECK(effective_epoch_ms(long_epoch, 4096) == 2 * 86'400'000);
  constexpr std::size_t n = 1000;
  const UnixMs epoch_ms = 28'125'000;
  CHECK(epoch_of(epoch_ms - 1, params, n) == 0);
  CHECK(epoch_of(epoch_ms, params, n) == 1);
  CHECK(epoch_of(3'600'000, params, n) == 0);  // an hour is no switch there
  CHECK(epoch_start_ms(3, params, n) == 3 * epoch_ms);
  CHECK(warmup_ms(params, n) == 5 * 60'000);  // the warm-up is the probes', not the epoch's
  CHECK_FALSE(in_warmup_before_switch(3'600'000 - 1, params, n));
  CHECK(in_warmup_before_switch(epoch_ms - 300'000, params, n));
  CHECK_FALSE(in_grace_after_switch(3'600'000, params, n));
  CHECK(in_grace_after_switch(epoch_ms + 299'999, params, n));
  CHECK_FALSE(in_grace_after_switch(epoch_ms + 300'000, params, n));
}

TEST_CASE("incoming witnesses probe their next-epoch targets during warm-up only") {
  Roster roster = make_roster({"DE", "NL", "RU", "US"}, {5, 5, 5, 5}, 3);
  const Parameters& params = roster.params;
  const UnixMs switch_ms = epoch_start_ms(472223, params, roster.servers.size());
  WitnessPlan current = plan_witnesses(roster, 472222);
  WitnessPlan next = plan_witnesses(roster, 472223);
  for (std::uint32_t o = 0; o < 20; ++o) {
    auto early = probe_targets(current, next, o, switch_ms - warmup_ms(params, roster.servers.size()) - 1, params);
    CHECK(early == current.targets(o));
    auto warm = probe_targets(current, next, o, switch_ms - 1, params);
    std::vector<std::uint32_t> expected;
    auto a = current.targets(o);
    auto b = next.targets(o);
    std::set_union(a.begin(), a.end(), b.begin(), b.end(), std::back_inserter(expected));
    CHECK(warm == expected);
    CHECK(probe_targets(roster, o, switch_ms - 1) == expected);
  }
}

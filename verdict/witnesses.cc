#include "verdict/witnesses.h"

#include <algorithm>
#include <iterator>
#include <utility>

#include "common/check.h"
#include "record/fleet_scale.h"
#include "verdict/hash.h"

namespace mesh::verdict {
namespace {

using Scored = std::pair<std::uint64_t, std::uint32_t>;  // (key, server)

// A candidate witness: the least loaded is drawn first; among equal loads
// the higher rendezvous score, then (a 64-bit collision) the lower index.
struct Candidate {
  std::uint32_t load;
  std::uint64_t score;
  std::uint32_t observer;
};

bool drawn_before(const Candidate& a, const Candidate& b) {
  if (a.load != b.load) return a.load < b.load;
  if (a.score != b.score) return a.score > b.score;
  return a.observer < b.observer;
}

bool plan_is_full_mesh(const Fleet& fleet, std::uint32_t per_country) {
  if (per_country == 0) return true;
  for (const auto& members : fleet.members_of_country) {
    if (members.size() > per_country) return false;
  }
  return true;
}

std::vector<std::uint32_t> target_order(const Fleet& fleet, std::uint64_t key) {
  std::vector<Scored> keyed;
  for (std::uint32_t t = 0; t < fleet.server_count; ++t) {
    keyed.emplace_back(target_order_key(key, fleet.id_hash[t]), t);
  }
  std::sort(keyed.begin(), keyed.end());
  std::vector<std::uint32_t> order;
  for (const Scored& entry : keyed) order.push_back(entry.second);
  return order;
}

// Draws target t's witnesses among `members` (one country): the
// `per_country` first candidates by drawn_before, or all of them where the
// country has that few. The load term keeps every observer's load within
// about one of its country's mean; the score term makes the draw a fresh
// pseudo-random one every epoch.
void draw_country(const Fleet& fleet, std::uint64_t key, std::uint32_t t,
                  const std::vector<std::uint32_t>& members, std::uint32_t per_country,
                  const std::vector<std::uint32_t>& load, std::vector<Candidate>& pool,
                  std::vector<std::uint32_t>& chosen) {
  pool.clear();
  for (std::uint32_t o : members) {
    if (o == t) continue;
    pool.push_back(Candidate{load[o], rendezvous_score(key, fleet.id_hash[t], fleet.id_hash[o]), o});
  }
  std::size_t need = std::min<std::size_t>(per_country, pool.size());
  std::partial_sort(pool.begin(), pool.begin() + static_cast<std::ptrdiff_t>(need), pool.end(),
                    drawn_before);
  for (std::size_t i = 0; i < need; ++i) chosen.push_back(pool[i].observer);
}

}  // namespace

bool WitnessPlan::assigned(std::uint32_t observer, std::uint32_t target) const {
  const auto& list = targets_of_observer[observer];
  return std::binary_search(list.begin(), list.end(), target);
}

std::vector<std::uint32_t> WitnessPlan::witnesses(std::uint32_t target) const {
  MESH_CHECK(target < server_count, "witnesses(): target out of range");
  if (!full_mesh) return witnesses_of_target[target];
  std::vector<std::uint32_t> all;
  for (std::uint32_t o = 0; o < server_count; ++o) {
    if (o != target) all.push_back(o);
  }
  return all;
}

std::vector<std::uint32_t> WitnessPlan::targets(std::uint32_t observer) const {
  MESH_CHECK(observer < server_count, "targets(): observer out of range");
  if (!full_mesh) return targets_of_observer[observer];
  return witnesses(observer);  // the full mesh is symmetric
}

WitnessPlan plan_witnesses(const Roster& roster, std::uint64_t epoch) {
  return plan_witnesses(roster, build_fleet(roster), epoch);
}

WitnessPlan plan_witnesses(const Roster& roster, const Fleet& fleet, std::uint64_t epoch) {
  MESH_CHECK(fleet.server_count == roster.servers.size(), "fleet of another roster");
  WitnessPlan plan;
  plan.roster_version = roster.version;
  plan.epoch = epoch;
  plan.server_count = fleet.server_count;
  std::uint32_t per_country = roster.params.witnesses_per_country;
  plan.full_mesh = plan_is_full_mesh(fleet, per_country);
  if (plan.full_mesh) return plan;

  std::uint64_t key = epoch_key(epoch);
  std::vector<std::uint32_t> load(fleet.server_count, 0);
  plan.witnesses_of_target.resize(fleet.server_count);
  plan.targets_of_observer.resize(fleet.server_count);
  std::vector<std::uint32_t> chosen;
  std::vector<Candidate> pool;
  // Two passes: first the forced draws (a country with no more candidates
  // than per_country gives them all), so that the free draws of the second
  // pass see those loads and even them out whatever the target order.
  const std::vector<std::uint32_t> order = target_order(fleet, key);
  for (bool forced : {true, false}) {
    for (std::uint32_t t : order) {
      for (std::uint32_t c = 0; c < fleet.countries.size(); ++c) {
        const auto& members = fleet.members_of_country[c];
        std::size_t candidates = members.size() - (fleet.country_of[t] == c ? 1 : 0);
        if ((candidates <= per_country) != forced) continue;
        chosen.clear();
        draw_country(fleet, key, t, members, per_country, load, pool, chosen);
        for (std::uint32_t o : chosen) {
          ++load[o];
          plan.witnesses_of_target[t].push_back(o);
          plan.targets_of_observer[o].push_back(t);
        }
      }
    }
  }
  for (auto& list : plan.witnesses_of_target) std::sort(list.begin(), list.end());
  for (auto& list : plan.targets_of_observer) std::sort(list.begin(), list.end());
  return plan;
}

std::uint64_t epoch_of(UnixMs now_ms, const Parameters& params, std::size_t server_count) {
  const DurationMs epoch_ms = effective_epoch_ms(params, server_count);
  if (now_ms <= 0 || epoch_ms <= 0) return 0;
  return static_cast<std::uint64_t>(now_ms / epoch_ms);
}

UnixMs epoch_start_ms(std::uint64_t epoch, const Parameters& params, std::size_t server_count) {
  const DurationMs epoch_ms = effective_epoch_ms(params, server_count);
  if (epoch_ms <= 0) return 0;
  return static_cast<UnixMs>(epoch) * epoch_ms;
}

DurationMs warmup_ms(const Parameters& params, std::size_t server_count) {
  const DurationMs epoch_ms = effective_epoch_ms(params, server_count);
  if (epoch_ms <= 0) return 0;
  DurationMs window = (static_cast<DurationMs>(params.fail_streak) + 2) *
                      std::max<DurationMs>(params.probe_interval_ms, 0);
  return std::min(window, epoch_ms);
}

bool in_warmup_before_switch(UnixMs now_ms, const Parameters& params, std::size_t server_count) {
  if (effective_epoch_ms(params, server_count) <= 0) return false;
  UnixMs next_start = epoch_start_ms(epoch_of(now_ms, params, server_count) + 1, params, server_count);
  return now_ms >= next_start - warmup_ms(params, server_count);
}

bool in_grace_after_switch(UnixMs now_ms, const Parameters& params, std::size_t server_count) {
  std::uint64_t epoch = epoch_of(now_ms, params, server_count);
  if (epoch == 0) return false;
  return now_ms < epoch_start_ms(epoch, params, server_count) + warmup_ms(params, server_count);
}

std::vector<std::uint32_t> probe_targets(const WitnessPlan& current, const WitnessPlan& next,
                                         std::uint32_t observer, UnixMs now_ms,
                                         const Parameters& params) {
  std::vector<std::uint32_t> targets = current.targets(observer);
  if (!in_warmup_before_switch(now_ms, params, current.server_count)) return targets;
  std::vector<std::uint32_t> incoming = next.targets(observer);
  std::vector<std::uint32_t> merged;
  std::set_union(targets.begin(), targets.end(), incoming.begin(), incoming.end(),
                 std::back_inserter(merged));
  return merged;
}

std::vector<std::uint32_t> probe_targets(const Roster& roster, std::uint32_t observer,
                                         UnixMs now_ms) {
  Fleet fleet = build_fleet(roster);
  std::uint64_t epoch = epoch_of(now_ms, roster.params, roster.servers.size());
  return probe_targets(plan_witnesses(roster, fleet, epoch),
                       plan_witnesses(roster, fleet, epoch + 1), observer, now_ms,
                       roster.params);
}

}  // namespace mesh::verdict

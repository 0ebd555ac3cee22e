// Who probes whom (docs/VERDICTS.md, "Who probes whom"): a pure,
// deterministic witness assignment computed from the roster and an epoch
// number, identical on every node. For each target, up to
// `witnesses_per_country` observers are drawn from every country (all of a
// country's servers where it has that few): targets draw in a per-epoch
// hashed order, each taking the least-loaded observers of the country, ties
// broken by a rendezvous hash of (epoch, target, observer), so the load
// stays even and the pairs change every epoch.
// witnesses_per_country == 0, or a fleet where no country has more than
// witnesses_per_country servers, is the full mesh: everyone probes everyone.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "common/time.h"
#include "record/roster.h"
#include "verdict/fleet.h"

namespace mesh::verdict {

struct WitnessPlan {
  std::uint64_t roster_version = 0;
  std::uint64_t epoch = 0;
  std::uint32_t server_count = 0;
  bool full_mesh = true;
  // Both empty when full_mesh (every other server is a witness).
  std::vector<std::vector<std::uint32_t>> witnesses_of_target;  // sorted indices
  std::vector<std::vector<std::uint32_t>> targets_of_observer;  // sorted indices
  bool operator==(const WitnessPlan&) const = default;

  // True when `observer` is assigned to probe `target` in this plan.
  // Never true for observer == target. O(log targets of observer).
  // Inline: the tally asks it for every result of every view.
  bool is_witness(std::uint32_t observer, std::uint32_t target) const {
    if (observer >= server_count || target >= server_count || observer == target) return false;
    return full_mesh || assigned(observer, target);
  }
  // Whether `target` is among `observer`'s assigned targets (not full mesh).
  bool assigned(std::uint32_t observer, std::uint32_t target) const;
  // The sorted witnesses of `target` (materialised for the full mesh).
  std::vector<std::uint32_t> witnesses(std::uint32_t target) const;
  // The sorted targets of `observer` (materialised for the full mesh).
  std::vector<std::uint32_t> targets(std::uint32_t observer) const;
};

// The witness plan of `roster` for `epoch`. Cost O(servers^2) hash
// evaluations (once per epoch and roster; callers cache it). The overload
// with a Fleet skips rebuilding the tables. REQUIRES: fleet built from roster.
WitnessPlan plan_witnesses(const Roster& roster, std::uint64_t epoch);
WitnessPlan plan_witnesses(const Roster& roster, const Fleet& fleet, std::uint64_t epoch);

// The epochs of a fleet of `server_count` servers are
// effective_epoch_ms(params, server_count) long (record/fleet_scale.h:
// epoch_ms itself up to 128 servers, in proportion to N above).
// Epoch number at `now_ms`: floor(now_ms / epoch length); 0 for times
// before 1970 or a non-positive epoch_ms (the assignment is then never
// re-drawn).
std::uint64_t epoch_of(UnixMs now_ms, const Parameters& params, std::size_t server_count);
// First millisecond of `epoch`.
UnixMs epoch_start_ms(std::uint64_t epoch, const Parameters& params, std::size_t server_count);

// The warm-up window: (fail_streak + 2) x probe_interval_ms, capped at
// the epoch's length. Incoming witnesses start probing this long before a
// switch, so that by the switch they hold fail_streak results plus two
// intervals of margin for report delay; and for this long after a switch
// the verdict also accepts the previous epoch's witnesses.
DurationMs warmup_ms(const Parameters& params, std::size_t server_count);
// True when now_ms lies in the warm-up window before the next switch.
bool in_warmup_before_switch(UnixMs now_ms, const Parameters& params, std::size_t server_count);
// True when now_ms lies in the first warm-up window after a switch
// (never in epoch 0, which has no predecessor).
bool in_grace_after_switch(UnixMs now_ms, const Parameters& params, std::size_t server_count);

// The sorted targets `observer` must probe at now_ms: its targets in
// `current` (the plan of epoch_of(now_ms)), plus its targets in `next` (the
// plan of the following epoch) during the warm-up window before the switch.
// REQUIRES: observer < current.server_count; next of the same roster.
std::vector<std::uint32_t> probe_targets(const WitnessPlan& current, const WitnessPlan& next,
                                         std::uint32_t observer, UnixMs now_ms,
                                         const Parameters& params);
// Convenience: computes both plans (O(servers^2)); daemons should cache.
std::vector<std::uint32_t> probe_targets(const Roster& roster, std::uint32_t observer,
                                         UnixMs now_ms);

}  // namespace mesh::verdict

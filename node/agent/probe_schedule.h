// When the agent probes each of its targets (docs/PROTOCOL.md, "Probes").
// Every target has its own slots on a grid of the clock, one per interval,
// at a phase that spreads a country's witnesses of it evenly over the
// interval, and the countries' between each other's (probe_phase): the
// first of a country's witnesses to probe after a block begins does so
// within interval / witnesses, not up to a whole interval later as with
// independent random phases (p99 of the wait 47 s of 60 with three
// witnesses, 20 s spread evenly), and the first of all of them (a
// powered-off server) within interval / (witnesses x countries), 4 s at
// 3 witnesses in 5 countries, where countries at random offsets left gaps
// of up to 20 s. Phases differ per target, so a node's probes do not
// bunch either. A probe brought forward (a confirmation) is
// followed by the first slot at least half an interval later. At most one
// probe per target is in flight. Pure; not thread-safe (the agent owns it).
#pragma once

#include <cstdint>
#include <limits>
#include <optional>
#include <span>
#include <string_view>
#include <vector>

#include "common/server_id.h"
#include "common/time.h"
#include "node/agent/confirmation.h"
#include "node/agent/tls_turns.h"
#include "record/roster.h"

namespace mesh::agent {

// A country's place among a roster's: its index among the roster's
// distinct country codes sorted bytewise, and their number (index 0 of 1
// for a country the roster does not name).
struct CountryPlace {
  std::uint32_t index = 0;
  std::uint32_t count = 1;
  bool operator==(const CountryPlace&) const = default;
};
CountryPlace country_place(const Roster& roster, std::string_view country);

// The phase of `target_id`'s probe slots for a witness of rank `turn.rank`
// among its `turn.turns` compatriot witnesses, in a country at `country`,
// in 2^-32ths of the interval: a per-target offset from the id's hash,
// plus (rank + index / count) / turns. So a country's witnesses are turns
// apart, and the countries' interleave between them. The same on every
// node (docs/PROTOCOL.md, "Probes").
std::uint32_t probe_phase(std::string_view target_id, CountryPlace country, TlsTurn turn);
// Its per-target offset alone: the phase of rank 0 of the first country.
std::uint32_t probe_base_phase(std::string_view target_id);
// The first slot at or after `from` of the grid of `interval_ms` at `phase`.
// REQUIRES: interval_ms > 0.
UnixMs next_slot_ms(UnixMs from, DurationMs interval_ms, std::uint32_t phase);

struct ScheduledTarget {
  ServerId id;
  std::uint32_t index = 0;          // in the roster of the last set_targets()
  UnixMs next_ms = 0;               // the next probe is due then
  std::uint32_t phase = 0;          // of its slots (probe_phase)
  std::uint32_t base_phase = 0;     // the target's, before rank and country (probe_base_phase)
  bool placed = false;              // next_ms was put on a slot (a new target is not, until set_phase)
  std::uint64_t in_flight = 0;      // probe id awaiting its outcome; 0: none
  UnixMs requested_ms = 0;          // when the probe in flight was requested
  // The timestamp of the target's latest report held then (0: none): a
  // failure of this probe is answered when the target had spoken since its
  // streak began before the probe was sent (verdict/probe_ledger.h).
  UnixMs heard_ms_at_request = 0;
  std::uint64_t reserved_bytes = 0; // volume reserved for it (node/agent/volume.h)
  bool tls = false;                 // the probe in flight includes a TLS handshake
  // TLS turns (node/agent/tls_turns.h): this node's among its compatriot
  // witnesses of the target; when the target was added (a new target waits
  // for its next turn); when this node last asked for a TLS probe of it.
  TlsTurn turn;
  UnixMs added_ms = 0;
  UnixMs last_tls_ms = std::numeric_limits<UnixMs>::min();  // never
  // Confirmations (node/agent/confirmation.h): whether this node's failure
  // streak of the target is being confirmed on the short schedule; the
  // rate limits of its rounds and of probes another witness's failure
  // brought forward.
  bool confirming = false;
  UnixMs streak_started_ms = 0;     // when the present streak's first probe was requested (0: not known)
  // When another witness's fresh failure of the target began, as its report
  // says (trigger_anchor_ms of confirmation.h; 0: none): a streak the next
  // probe's outcome begins counts its span from there (within 10 s of that
  // probe's start). Cleared at every outcome.
  UnixMs trigger_anchor_ms = 0;
  RateLimit confirm_rounds;
  RateLimit triggered;
};

// When the present failure streak of `target` began: its first probe's
// request, or `fallback` (the latest probe's) when that is not known (a
// streak restored from the store after a restart).
inline UnixMs streak_started(const ScheduledTarget& target, UnixMs fallback) {
  return target.streak_started_ms != 0 ? target.streak_started_ms : fallback;
}

class ProbeSchedule {
 public:
  // Replaces the targets by `targets` (sorted roster indices of `roster`).
  // A target still listed keeps its next time, its probe in flight, its
  // phase and its TLS state; a new one is due at `now` until set_phase()
  // puts it on its first slot.
  void set_targets(const Roster& roster, std::span<const std::uint32_t> targets, UnixMs now);
  // Sets `target`'s phase; a target not yet placed is due at its first slot
  // at or after `now`. A placed one keeps its next time: the new phase
  // applies from its next probe.
  void set_phase(ScheduledTarget& target, std::uint32_t phase, UnixMs now, DurationMs interval_ms);

  // Calls fn(ScheduledTarget&) for each target due at `now` with no probe
  // in flight, in target order, until fn returns false. fn either calls
  // start() on it or leaves it due.
  template <class Fn>
  void for_each_due(UnixMs now, Fn&& fn) {
    if (now < earliest_ms_) return;
    for (ScheduledTarget& target : targets_) {
      if (target.in_flight != 0 || target.next_ms > now) continue;
      if (!fn(target)) break;
    }
    update_earliest();
  }
  // Marks a probe requested for `target`; its next one is due at its first
  // slot at least half an interval from now. A TLS probe sets last_tls_ms.
  void start(ScheduledTarget& target, std::uint64_t probe_id, UnixMs now, DurationMs interval_ms,
             std::uint64_t reserved_bytes, bool tls);
  // Leaves `target` without a probe until `until_ms` (the volume cap).
  void defer(ScheduledTarget& target, UnixMs until_ms) { target.next_ms = until_ms; }
  // Makes the target with roster index `index` due at `now` unless it is
  // due sooner (or its probe is in flight, or it is not a target): a
  // failure to confirm at once. True when it was brought forward.
  bool hurry(std::uint32_t index, UnixMs now);
  // Makes `target`'s next probe due at `at_ms` unless it is due sooner: a
  // failure to confirm (node/agent/confirmation.h).
  void bring_forward(ScheduledTarget& target, UnixMs at_ms);
  // The current target with roster index `index`, or null.
  ScheduledTarget* find(std::uint32_t index);
  ScheduledTarget* find(std::string_view target_id);
  // The target as it was while probe `probe_id` was in flight (which is
  // cleared), or nullopt: a probe forgotten as lost. A target dropped from
  // the set while its probe ran is still found (its reservation settles).
  std::optional<ScheduledTarget> finish(std::string_view target_id, std::uint64_t probe_id);
  // Forgets probes in flight for longer than `lost_after_ms` (their
  // reservations stay charged: they may have run); returns how many.
  std::uint64_t expire(UnixMs now, DurationMs lost_after_ms);

  // The clock jumped by `delta_ms`: every time held moves with it, so a step
  // back does not silence the probes for as long as the step.
  void shift(DurationMs delta_ms);

  std::size_t in_flight() const { return in_flight_; }
  const std::vector<ScheduledTarget>& targets() const { return targets_; }
  std::vector<ScheduledTarget>& targets() { return targets_; }

 private:
  void update_earliest();

  std::vector<ScheduledTarget> targets_;  // by roster index
  std::size_t in_flight_ = 0;
  UnixMs earliest_ms_ = std::numeric_limits<UnixMs>::min();
  // Outcomes of probes of targets no longer listed still settle.
  std::vector<ScheduledTarget> departed_;
};

}  // namespace mesh::agent

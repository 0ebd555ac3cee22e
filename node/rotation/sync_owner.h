// The panel sync's one writer for the fleet (docs/PANELS.md, "One writer"):
// every node computes the same verdicts, so every node would make the same
// change; only the sync owner makes it. The owner is a pure function of the
// evaluation and the roster, so every converged node names the same one
// with no election and no message: the highest rendezvous score of
// (roster version, server id) among the candidates that are themselves ok
// and reported lately; warm ones (their latest report does not say they
// started lately: node/agent/warm_up.h) before warming ones, and of those,
// steady ones (no flap in their last hour, not held out) before the
// others. When the owner goes silent its status and its last report say
// so everywhere, and the next candidate in score order takes over.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "common/server_id.h"
#include "common/time.h"
#include "record/roster.h"
#include "verdict/evaluation.h"

namespace mesh::rotation {

// Deterministic score of `server` for the roster `version`; higher wins.
std::uint64_t owner_score(std::uint64_t roster_version, std::string_view server);

// How long ago a candidate's latest report may be: two heartbeats (a live
// node reports at least once a heartbeat), and never more than
// stale_after_ms, both as the roster's size scales them
// (record/fleet_scale.h: above 128 servers a heartbeat is rarer, and an
// owner held to the roster's own interval dropped out between two).
DurationMs owner_report_age_max_ms(const Roster& roster);

// When each server's latest report was signed (0: none), and the time to
// judge their age at. The evaluation carries both as of its own time; a
// node that keeps its evaluation until what it shows changes (the agent)
// passes the reports it holds now and its clock instead.
struct ReportTimes {
  std::vector<UnixMs> last_report_ms;  // roster order
  UnixMs now_ms = 0;
  // Roster order: the latest report says its node is warming
  // (Report::warming). Empty: none is.
  std::vector<bool> warming;
  // Roster order: the latest report says its node delivers the fleet's
  // alerts (Report::alert_sender). Empty: none does.
  std::vector<bool> alert_sender;
};
ReportTimes report_times(const verdict::Evaluation& evaluation);

// The time of the latest report held that says its node delivers the
// fleet's alerts (a sender's claim): that node dealt with the transitions
// it saw up to then. nullopt: no report held says so.
std::optional<UnixMs> latest_sender_claim(const ReportTimes& times);

// The sync owner by this evaluation: of the roster's servers listed in
// `candidates` (empty: every server), those whose status is ok and whose
// latest report is at most owner_report_age_max_ms old; of the first tier
// that has any (warm and steady, warm, warming and steady, warming), the
// one of highest owner_score. nullopt: no candidate qualifies.
// REQUIRES: `evaluation` is of `roster`; `times` has one entry per server.
std::optional<ServerId> sync_owner(const Roster& roster, const verdict::Evaluation& evaluation,
                                   const ReportTimes& times, std::span<const ServerId> candidates);
inline std::optional<ServerId> sync_owner(const Roster& roster, const verdict::Evaluation& evaluation,
                                          std::span<const ServerId> candidates) {
  return sync_owner(roster, evaluation, report_times(evaluation), candidates);
}

// The time against which node `self` judges the others' reports fresh:
// now, but never more than one (fleet-scaled) heartbeat after the newest
// report it holds from any other node. A node that has heard no one
// lately is more likely behind than everyone else silent (its loop
// stalled under load, their frames still unread): judged against its
// clock alone, every other candidate looks silent at once, and it names
// itself the owner and writes while the fleet names another (the likely
// cause of panel_fleet_test's failures under CI load, twice: after the
// owner's kill n4, which every steady candidate outranks, wrote once, and
// the fleet named n8). Lifeguard's local health in memberlist: a
// slow member must not accuse the others. A candidate that stopped
// reporting while the others go on still drops out after two heartbeats;
// in a fleet of two, where the other's silence is all there is to hear,
// it drops out when it is no_data (stale_after). With no report from
// another node at all: now.
UnixMs freshness_reference_ms(const Roster& roster, const verdict::Evaluation& evaluation, const ReportTimes& times,
                              std::string_view self);

// Whether this node may write to the panel, and if not, why not.
enum class WriteRight : std::uint8_t {
  owner,          // it is the owner by its own view, and that view is sound
  not_owner,      // another node is
  no_owner,       // no candidate qualifies (this node included)
  partitioned,    // its evaluation looks like a split fleet: it never writes then
  clock_suspect,  // the fleet's reports say its clock is off: it never writes then
  warming,        // it started lately and has not caught up (node/agent/warm_up.h): it never writes then
};
const char* to_string(WriteRight right);

struct OwnerView {
  WriteRight right = WriteRight::no_owner;
  std::optional<ServerId> owner;  // by this node's view (also when it may not write)
};

// The write right of node `self`: owner by its own view (the others'
// reports judged against freshness_reference_ms), its evaluation
// not partitioned, its clock not suspect (the agent's clock watch), and it
// not warming (Agent::warming: a node that names itself while warming does
// so only as the last candidate its unripe view shows; a restarted node
// whose stored reports were all stale named itself the sender and told
// its own catching up as transitions: the alert soak, 2026-12-05).
OwnerView write_right(const Roster& roster, const verdict::Evaluation& evaluation, const ReportTimes& times,
                      std::span<const ServerId> candidates, std::string_view self, bool clock_suspect,
                      bool warming = false);
inline OwnerView write_right(const Roster& roster, const verdict::Evaluation& evaluation,
                             std::span<const ServerId> candidates, std::string_view self, bool clock_suspect) {
  return write_right(roster, evaluation, report_times(evaluation), candidates, self, clock_suspect);
}

// How long a node must have named itself the owner, with a sound view,
// before the first write of its term: two (fleet-scaled) heartbeats, the
// time a candidate may be silent before it drops out, and at most 10 s.
// Views differ for the time a report takes to go round, and longer when a
// path breaks: after the owner's kill under a sanitized CI load
// (tests/panels/panel_fleet_test, 2026-12-06; heartbeats of 2 s) the
// gossip trees that ran through it took 5-9 s to mend, three nodes missed
// n8's reports meanwhile, and n6 named itself 0.8 s after n8 did, wrote at
// once, and stepped down 2.0 s later (its view turned partitioned). Two
// writers are harmless (the sync is level-triggered) but not what "one
// writer" promises: a node that names itself for less than this writes
// nothing.
DurationMs owner_settle_ms(const Roster& roster);

// One node's term as the owner, from the write rights it computes tick by
// tick: it may write once its right has been `owner` continuously for
// `settle_ms` (any other right ends the term). Pure: the caller passes
// its clock.
class OwnerTerm {
 public:
  // The right at `now_ms`; true when this node may write now.
  bool observe(WriteRight right, UnixMs now_ms, DurationMs settle_ms);
  // When the current term began (-1: not the owner now).
  UnixMs since_ms() const { return since_ms_; }

 private:
  UnixMs since_ms_ = -1;
};

}  // namespace mesh::rotation

// Alerts (docs/PANELS.md, "Alerts"): one message per transition of a
// server, for the whole fleet. Every node tracks the transitions of its own
// evaluations the same way; only the sync owner (node/rotation/sync_owner.h)
// delivers them. Pure: time is the evaluation's.
//
// A takeover loses nothing: a node that is not the owner keeps the
// transitions the owner may not have seen (those after the owner's latest
// report, less a margin), and delivers them when it becomes the owner. So a
// transition in the owner's last moments may be sent twice (docs/PANELS.md
// bounds how many); none is dropped.
#pragma once

#include <cstdint>
#include <deque>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "common/server_id.h"
#include "common/time.h"
#include "record/roster.h"
#include "verdict/evaluation.h"

namespace mesh::rotation {

// What users see of a server: its status, or "held_out" for a server out
// of rotation while its status is ok or no_data (a flapping server the
// engine holds out, "Held out: flapping (N changes in the last hour)").
std::string alert_state(const verdict::ServerVerdict& verdict, bool global_in);

struct Alert {
  enum class Kind : std::uint8_t {
    transition,  // the server's state changed
    flapping,    // it changed too often: one message, then quiet until it settles
    settled,     // a flapping server has stayed in one state for the quiet time
  };
  Kind kind = Kind::transition;
  ServerId server;
  std::string country;              // the server's
  std::vector<std::string> routes;  // the server's routes
  std::string from, to;             // alert_state before and after
  std::string caption;              // the verdict's caption, or the flapping summary
  std::string by_country;           // failing witnesses by country ("RU 3/3, NL 0/2")
  UnixMs at_ms = 0;                 // the evaluation's time
  bool in_rotation = true;          // after the transition
  bool operator==(const Alert&) const = default;
};
const char* to_string(Alert::Kind kind);

struct AlertSettings {
  std::uint32_t flap_changes = 4;       // this many transitions within flap_window_ms: flapping
  DurationMs flap_window_ms = 3'600'000;
  DurationMs settle_ms = 900'000;       // a flapping server settled after this long in one state
  std::size_t pending_max = 256;        // transitions held for a takeover; the oldest go first
};

class AlertTracker {
 public:
  explicit AlertTracker(AlertSettings settings = {}) : settings_(settings) {}

  // The transitions from the previous evaluation to this one, held as
  // pending. The first evaluation (and each new roster's) is the baseline:
  // no alert for the state a node starts in. For the roster's
  // stale_after_ms after that, a node is still gathering the fleet's
  // reports: a server leaving `no_data` then is this node catching up, not
  // a transition, and moves the baseline silently. So does every change
  // while `catching_up` (this node is warming: node/agent/warm_up.h, or its
  // clock is suspect): what moves in its view then is mostly reports it
  // had not heard, or an evaluation at a guessed time, and a sound sender
  // tells the fleet's transitions. The first evaluation after
  // catching up ends is silent too: it took in the report that ended it
  // (the last member heard from), which a warm sender has already told.
  void observe(const Roster& roster, const verdict::Evaluation& evaluation, bool catching_up = false);

  // The owner takes every pending alert to deliver. A node that is not the
  // owner drops those at or before `handled_before_ms` (the owner's latest
  // report, less a margin: it has dealt with them).
  std::vector<Alert> take_pending();
  void drop_handled(UnixMs handled_before_ms);
  std::size_t pending() const { return pending_.size(); }

 private:
  struct ServerTrack {
    std::string state;
    std::deque<UnixMs> changes;  // within flap_window_ms, at most flap_changes
    bool damped = false;
    UnixMs last_change_ms = 0;
  };
  void push(Alert alert);
  void track(const Roster& roster, const verdict::ServerVerdict& verdict, bool global_in, UnixMs now);
  DurationMs settle_ms() const { return settings_.settle_ms; }

  AlertSettings settings_;
  std::uint64_t roster_version_ = 0;
  UnixMs baseline_ms_ = 0;      // the time of the baseline evaluation
  DurationMs catch_up_ms_ = 0;  // the roster's stale_after_ms
  bool catching_up_ = false;    // observe()'s, for track()
  bool was_catching_up_ = false;  // the previous observe()'s `catching_up`
  std::map<ServerId, ServerTrack> tracks_;  // bounded by the roster
  std::deque<Alert> pending_;
};

}  // namespace mesh::rotation

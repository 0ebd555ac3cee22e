// Internal: the state of one run, split over simulator.cc (the loop,
// timers, reports, probes, frames), simulator_events.cc (the timeline) and
// checks.cc (verdicts, snapshots, expectations). Not part of the API.
#pragma once

#include <cstdint>
#include <array>
#include <deque>
#include <map>
#include <memory>
#include <queue>
#include <set>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "gossip/core.h"
#include "common/rng.h"
#include "tools/meshsim/fleet_gen.h"
#include "tools/meshsim/memos.h"
#include "tools/meshsim/network.h"
#include "tools/meshsim/results.h"
#include "tools/meshsim/scenario.h"
#include "tools/meshsim/sim_node.h"
#include "tools/meshsim/streams.h"
#include "tools/meshsim/simulator.h"

namespace mesh::sim {

enum class Action : std::uint8_t {
  scenario_event,  // arg: index in scenario.events
  tick,            // node's agent tick
  probe_result,    // arg: outcome slot; node: the prober (answers an agent's probe request)
  deliver,         // arg: frame slot; node: receiver
  check,           // verdict check (arg: bit 0 periodic, bit 1 snapshot index follows in gen)
  digest_check,    // digest comparison inside a quiet window (arg: expectation index)
  measure_start,   // the metrics window opens: baselines are taken
  link_failed,     // node: the sender; arg: the peer whose path its transport found failed
  link_up,         // node: the sender; arg: the peer it just opened a connection to
};

// In a deliver item's arg, beside the frame slot: the frame came on the
// sender's own connection (which the receiver then adopts).
inline constexpr std::uint32_t kOwnConnectionBit = 1u << 31;

struct Item {
  UnixMs at = 0;
  std::uint64_t seq = 0;
  Action action = Action::tick;
  std::uint32_t node = 0;
  std::uint32_t gen = 0;
  std::uint32_t arg = 0;
  bool operator>(const Item& other) const {
    return at != other.at ? at > other.at : seq > other.seq;
  }
};

// A record on its way to every node (dissemination measurement).
struct Tracked {
  UnixMs published_ms = 0;
  std::uint32_t needed = 0;
  std::uint32_t reached = 0;
  std::uint32_t origin = 0;
};

class Run {
 public:
  Run(const Scenario& scenario, World world, const RunOptions& options);
  RunResult execute();

  // ---- simulator.cc ----
  void schedule(UnixMs at, Action action, std::uint32_t node = 0, std::uint32_t gen = 0,
                std::uint32_t arg = 0);
  void start_agent(SimNode& node, bool fresh_install);
  void stop_agent(SimNode& node);
  void on_tick(SimNode& node);
  void on_probe_result(SimNode& node, std::uint32_t slot);
  // `arg`: the frame slot, with kOwnConnectionBit.
  void on_deliver(SimNode& node, std::uint32_t arg, std::uint32_t sender);
  // The daemon's transport finds the path from -> to failed at `at` (a
  // connect or the user timeout ran out) and tells its agent; one report
  // pending per pair.
  void report_link_failure(std::uint32_t from, std::uint32_t to, UnixMs at);
  void on_link_failed(SimNode& node, std::uint32_t peer);
  void on_link_up(SimNode& node, std::uint32_t peer);
  void apply_effects(SimNode& node, agent::AgentEffects&& effects);
  void run_probe(SimNode& node, const agent::ProbeRequest& request);
  void answer_self_check(SimNode& node);
  void note_published(SimNode& node, const Bytes& raw);
  void send_frame(SimNode& from, std::uint32_t to_world, Bytes frame);
  void inject_frame(std::uint32_t to_world, Bytes frame);
  void publish_record(SimNode& node, const Bytes& raw, bool track);
  void track_record(SimNode& node, const Bytes& raw);
  const std::vector<std::uint32_t>& world_indices(const Roster& roster);
  ProbeFailure probe(std::uint32_t observer, std::uint32_t target, bool tls);
  void track_persisted(const Bytes& raw);
  std::uint32_t running_with_roster() const;

  // ---- simulator_events.cc ----
  void apply_event(const Event& event);
  void refresh_truth();
  void roster_change(const Event& event);
  void inject_forged(const Event& event);
  std::vector<bool> broken_half(std::uint32_t observer);

  // ---- checks.cc ----
  void schedule_checks();
  void on_check(bool periodic, std::optional<std::size_t> snapshot);
  void on_digest_check(std::size_t expectation);
  const verdict::Evaluation* evaluate(SimNode& node);
  void judge_false_verdicts(const SimNode& node, const verdict::Evaluation& evaluation);
  void judge_missed_verdicts(const SimNode& node, const verdict::Evaluation& evaluation);
  void judge_expectations(const std::vector<const verdict::Evaluation*>& evaluations);
  void count_rotation_changes(std::size_t expectation, const std::vector<const verdict::Evaluation*>& evaluations);
  void take_snapshot(std::size_t index, const std::vector<const verdict::Evaluation*>& evaluations);
  void finish_expectations();
  void finish_metrics();
  void start_measuring();
  gossip::Counters total_counters() const;

  const Scenario& scenario_;
  World world_;
  RunOptions options_;
  const Parameters& params_;
  UnixMs start_ms_ = 0;  // virtual time of the run's t=0 (scenario.start_unix_ms)
  UnixMs now_ms_ = 0;    // virtual time (Unix ms)
  Rng rng_;
  Network network_;
  Streams streams_;
  MemoVerifier verifier_;
  MemoRosters roster_memo_;
  MemoRecords record_memo_;
  MemoPlans plan_memo_;
  std::vector<SimNode> nodes_;
  std::priority_queue<Item, std::vector<Item>, std::greater<>> queue_;
  std::uint64_t next_seq_ = 0;

  std::vector<Bytes> frames_;            // in-flight frames by slot
  std::vector<std::uint32_t> free_slots_;
  std::vector<agent::ProbeOutcome> outcomes_;  // probe outcomes on their way back, by slot
  std::vector<std::uint32_t> free_outcomes_;
  std::uint32_t tamper_pending_ = 0;     // in-flight frames still to corrupt (inject_forged)

  // Rosters the operator signed, by version; the current one is the last.
  std::map<std::uint64_t, Roster> rosters_;
  std::map<std::uint64_t, Bytes> roster_records_;
  std::map<std::uint64_t, std::vector<std::uint32_t>> world_index_cache_;

  // Dissemination.
  std::unordered_map<std::uint64_t, Tracked> tracked_;      // by the last 8 bytes of the record
  std::vector<std::uint64_t> open_record_of_origin_;        // per world index: tracked key or 0
  std::vector<std::uint32_t> dissemination_rounds_;
  std::uint64_t record_bytes_published_ = 0;
  bool measuring_ = false;
  UnixMs measure_from_ms_ = 0;                               // virtual time the window opened
  gossip::Counters counters_baseline_;
  std::vector<std::array<std::uint64_t, 3>> bytes_baseline_; // per node: sent, received, probe

  // Checks.
  DurationMs false_grace_ms_ = 0;
  DurationMs missed_after_ms_ = 0;  // the detection bound
  // Convergence (digests_agree): every record a node signed, and every
  // roster version the operator published, with when (virtual time).
  struct Signed {
    UnixMs published_ms = 0;
    UnixMs timestamp_ms = 0;
    std::uint64_t seq = 0;
  };
  std::vector<std::vector<Signed>> signed_;                 // per world index
  std::vector<std::pair<UnixMs, std::uint64_t>> rosters_published_;
  std::deque<verdict::Evaluation> check_evaluations_;      // this check's, pointers stay valid
  std::vector<DurationMs> since_ms_;                        // per expectation: time-to-verdict origin
  std::vector<std::optional<DurationMs>> first_shown_ms_;   // per expectation (status)
  std::vector<int> expectation_state_;                      // per expectation: -1 unknown, 0 fail, 1 pass
  std::vector<std::string> expectation_detail_;
  // rotation_changes_max, by expectation: per node, the membership shown at
  // the last check (-1: none yet) and the changes counted.
  std::map<std::size_t, std::vector<int>> rotation_shown_;
  std::map<std::size_t, std::vector<std::uint64_t>> rotation_changes_;
  std::map<std::string, std::uint64_t> network_drops_;
  std::unordered_set<std::uint64_t> failure_pending_;
  std::string xlast_;  // from << 32 | to: a link_failed scheduled

  RunResult result_;
};

}  // namespace mesh::sim

// Internal: the Daemon behind run_daemon (daemon.h), split over daemon.cc
// (start-up, ticks, signals, shutdown) and daemon_effects.cc (carrying out
// the agent's effects, and the callbacks that feed it). Included by those
// two files only: it pulls in Asio.
#pragma once

#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/signal_set.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/strand.hpp>

#include <chrono>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <thread>

#include "node/agent/agent.h"
#include "node/api/server.h"
#include "node/api_snapshot.h"
#include "node/config.h"
#include "node/daemon.h"
#include "node/lmdb_agent_store.h"
#include "node/panel/panel_worker.h"
#include "node/rotation/alert_tracker.h"
#include "node/prober.h"
#include "node/roster_check.h"
#include "node/self_check.h"
#include "node/standing_problems.h"
#include "node/transport.h"

namespace mesh::node {

// How often the daemon looks at its links, volume and clock for log lines.
inline constexpr DurationMs kStatusLogIntervalMs = 10'000;
// The API's snapshot (docs/API.md, "Freshness"): rebuilt every tick while
// the API read one within kSnapshotReadersMs, else every kSnapshotIdleMs
// (and at once when the verdicts an operator sees change).
inline constexpr DurationMs kSnapshotReadersMs = 10'000;
inline constexpr DurationMs kSnapshotIdleMs = 5'000;
// A wall-clock step larger than this between two ticks is a jump.
inline constexpr DurationMs kClockJumpMs = 2'000;
// How often freed heap pages go back to the kernel (Daemon::trim_heap).
inline constexpr DurationMs kHeapTrimIntervalMs = 60'000;
// Alerts: a node that is not the sender drops the transitions it saw up to
// this long before the sender's latest report (the sender has dealt with
// them), and keeps the later ones for a takeover (docs/PANELS.md, "Alerts").
inline constexpr DurationMs kAlertHandoverMarginMs = 5'000;
// Shutdown: every step after SIGTERM finishes within this.
inline constexpr DurationMs kShutdownMs = 2'000;
// A problem that stands (a roster file refused, this node missing from the
// roster) is logged again this often, until it is fixed.
inline constexpr DurationMs kProblemLogIntervalMs = 60'000;

// Why a start failed: exit 1 (the machine: a key file, a port, the data
// dir) or exit 2 (the operator's files disagree: no roster to start from,
// a key that is not this node's in the roster). node/daemon.h.
enum class StartError { cannot_start, bad_config };

// The roster record among what a store holds, if any.
std::optional<Bytes> stored_roster(const agent::StoredState& stored);

class Daemon {
 public:
  Daemon(NodeConfig config, std::string config_path);
  ~Daemon();
  int run();

 private:
  using Strand = boost::asio::strand<boost::asio::io_context::executor_type>;

  // daemon.cc
  Status<StartError> open();
  Status<StartError> open_store(const SecretKey& key);
  Status<StartError> open_api();
  void serve_api();
  void schedule_tick();
  void on_tick();
  void wait_signals();
  void on_signal(int signal);
  void reload();
  void shutdown(int exit_code, bool flush);
  void join_api();  // stops the API's io_context and joins its threads
  void check_clock();
  void log_clock();
  void trim_heap();
  UnixMs wall_now() const;

  // daemon_roster.cc: the roster at start, the roster file, and the
  // problems that stand while the node runs.
  std::vector<NamedKey> known_keys() const;
  Status<StartError> check_start_roster(const std::optional<Bytes>& stored_roster);
  void offer_roster_file();
  void set_problem(const std::string& code, std::optional<std::string> message);
  void check_membership_in(const Roster& roster);
  void log_problems();
  bool starting(UnixMs now) const;
  void end_start(UnixMs now);

  // daemon_effects.cc
  void apply(agent::AgentEffects&& effects);
  void on_frame(const Bytes& frame, InboundId inbound);
  void start_probe(const agent::ProbeRequest& request);
  void run_self_check();
  void on_roster_changed();
  void note_probe(const agent::ProbeOutcome& outcome);
  void note_self_check(const agent::SelfCheckOutcome& outcome);
  void log_status();
  void publish_snapshot();
  void offer_roster(std::string raw, std::function<void(api::ApiResponse)> reply);

  // daemon_panel.cc
  void open_panel();
  void drive_panel();

  NodeConfig config_;
  std::string config_path_;
  PublicKey node_key_{};  // this node's public key (its key file's)
  UnixMs started_ms_ = 0;
  boost::asio::io_context io_;
  Strand strand_;
  boost::asio::steady_timer tick_timer_;
  boost::asio::signal_set signals_;
  std::chrono::steady_clock::time_point next_tick_;

  std::unique_ptr<LmdbAgentStore> store_;
  std::unique_ptr<agent::Agent> agent_;
  std::unique_ptr<Transport> transport_;
  std::unique_ptr<Prober> prober_;
  std::unique_ptr<SelfChecker> self_checker_;
  // The API on threads of its own, one io_context each ([api] threads): no
  // request, however slow or many, takes time from the agent's loop.
  std::vector<std::unique_ptr<boost::asio::io_context>> api_ios_;
  std::vector<boost::asio::executor_work_guard<boost::asio::io_context::executor_type>> api_work_;
  std::vector<std::thread> api_threads_;
  std::unique_ptr<api::ApiServer> api_;
  Endpoint api_bound_;  // the address the API's listener is bound to
  Endpoint gossip_bound_;  // the address the gossip listener is bound to
  api::SnapshotBox snapshots_;
  ProbeStats probe_stats_;
  std::uint64_t api_index_ = 0;  // X-Meshnode-Index: moves with route membership
  std::shared_ptr<const verdict::Evaluation> indexed_verdicts_;
  std::shared_ptr<const verdict::Evaluation> published_verdicts_;  // logged_verdicts_ at the last snapshot
  UnixMs snapshot_read_ms_ = 0;  // when the API was last seen reading a snapshot
  std::optional<std::pair<Endpoint, std::string>> self_check_target_;  // listener, SNI
  // The panel sync and the alerts (docs/PANELS.md), on a thread of their own.
  std::unique_ptr<panel::PanelWorker> panel_;
  rotation::AlertTracker alert_tracker_;
  std::shared_ptr<const verdict::Evaluation> tracked_verdicts_;  // the last one the tracker saw
  bool tracked_catching_up_ = false;  // and whether this node was warming or its clock suspect then

  // Problems that stand (docs/API.md, GET /healthz): the roster file
  // refused, this node absent from the roster held or listed with another
  // key. Each is logged at once and every kProblemLogIntervalMs, and shown
  // by /healthz and /metrics.
  StandingProblems problems_{kProblemLogIntervalMs};
  bool problems_changed_ = false;  // publish a snapshot at once

  bool stopping_ = false;
  int exit_code_ = kExitOk;

  // Clock-jump detection: the wall clock against the monotonic one.
  std::chrono::steady_clock::time_point last_mono_;
  UnixMs last_wall_ = 0;

  // For log lines on changes only.
  std::shared_ptr<const verdict::Evaluation> logged_verdicts_;
  // Servers not heard from since the start (node/verdict_log.h); those still
  // silent stale_after_ms after it are logged then.
  std::set<ServerId> unheard_;
  bool start_over_ = false;
  std::map<ServerId, ProbeFailure> probe_failing_;  // targets whose last probe failed
  std::optional<SelfCheck> last_self_check_;
  std::map<ServerId, bool> link_down_;
  bool volume_tight_ = false;
  agent::ClockState clock_state_;
  UnixMs next_status_log_ms_ = 0;
  std::chrono::steady_clock::time_point next_heap_trim_;
};

}  // namespace mesh::node

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
#include "node/self_check.h"
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

class Daemon {
 public:
  Daemon(NodeConfig config, std::string config_path);
  ~Daemon();
  int run();

 private:
  using Strand = boost::asio::strand<boost::asio::io_context::executor_type>;

  // daemon.cc
  Status<ConfigError> open();
  Status<ConfigError> open_api();
  void serve_api();
  void offer_roster_file();
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

  // daemon_effects.cc
  void apply(agent::AgentEffects&& effects);
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

  bool stopping_ = false;
  int exit_code_ = kExitOk;

  // Clock-jump detection: the wall clock against the monotonic one.
  std::chrono::steady_clock::time_point last_mono_;
  UnixMs last_wall_ = 0;

  // For log lines on changes only.
  std::shared_ptr<const verdict::Evaluation> logged_verdicts_;
  std::map<ServerId, ProbeFailure> probe_failing_;  // targets whose last probe failed
  std::optional<SelfCheck> last_self_check_;
  std::map<ServerId, bool> link_down_;
  bool volume_tight_ = false;
  agent::ClockState clock_state_;
  UnixMs next_status_log_ms_ = 0;
  std::chrono::steady_clock::time_point next_heap_trim_;
};

}  // namespace mesh::node

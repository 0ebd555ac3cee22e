// The node's look at itself for its report (record/report.h, SelfCheck and
// Metrics): is the traffic listener answering, is the VPN service running,
// and the metrics. Nothing here blocks the io_context: the listener check
// is one probe through a Prober; the service check and the metrics (spawns,
// /proc, statvfs) run on a private worker thread.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "common/time.h"
#include "node/agent/effects.h"
#include "node/prober.h"
#include "node/service_check.h"
#include "record/roster.h"

namespace mesh::node {

struct SelfCheckSettings {
  // The node's own traffic listener, probed like a user's app would.
  // port 0: no listener check (listener_ok stays true).
  Endpoint listener;
  bool listener_tls = true;
  std::string listener_sni;
  DurationMs listener_timeout_ms = 5'000;  // each of the connect and TLS deadlines
  // From parse_service_spec(); kind none: no service check, service_ok true.
  ServiceSpec service;
  DurationMs exec_timeout_ms = 5'000;  // systemctl and exec: commands
  std::string data_dir;                // disk metrics; "": 0
  // Established connections on this local port are listener_connections;
  // 0: listener.port.
  std::uint16_t listener_port = 0;
  std::string proc_root = "/proc";  // tests point it at fixture files
};

using SelfCheckDone = std::function<void(agent::SelfCheckOutcome)>;

// Thread safety: run() may be called from any thread; `done` runs on a
// strand of the io_context. Runs may overlap: their worker parts run one
// after another, in order. Destruction waits for the worker's queued parts
// (bounded by exec_timeout_ms each) and cancels a listener probe in flight;
// the `done` of a run in flight is still posted. REQUIRES: the io_context
// outlives the SelfChecker and keeps running until every `done` ran.
class SelfChecker {
 public:
  SelfChecker(boost::asio::io_context& io, SelfCheckSettings settings);
  ~SelfChecker();
  SelfChecker(const SelfChecker&) = delete;
  SelfChecker& operator=(const SelfChecker&) = delete;

  // Checks the listener and the service and samples the metrics; calls
  // `done` exactly once. self_check.reason (≤ kSelfCheckReasonBytesMax
  // bytes) names what failed: "listener 127.0.0.1:443: tcp_refused",
  // "service systemd:xray: inactive", both joined by "; ".
  void run(SelfCheckDone done);

  // Stops for good, promptly (a daemon shutting down): the child process
  // of a check in progress is killed at once, queued checks are dropped
  // (their `done` never runs), the listener probe is cancelled; later run()
  // calls do nothing. The destructor then returns within one poll step.
  void shutdown();

  struct Shared;

 private:
  struct Worker;
  std::shared_ptr<Shared> shared_;
  std::unique_ptr<Worker> worker_;
  Prober prober_;
};

}  // namespace mesh::node

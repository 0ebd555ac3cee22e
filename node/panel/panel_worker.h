// The panel worker: one thread and io_context of its own for the panel
// sync (panel_sync.h) and the alerts (alert_sender.h), so that a panel, a
// webhook or Telegram answering slowly or not at all never takes time from
// the agent's strand. The daemon hands it inputs at each tick (offer_sync,
// deliver: they post and return) and reads its status (copied under a
// mutex, at most a tick old). Asio stays in panel_worker.cc.
#pragma once

#include <memory>
#include <vector>

#include "node/config.h"
#include "node/panel/panel_sync.h"
#include "node/panel/status.h"
#include "node/rotation/alert_tracker.h"

namespace mesh::panel {

class PanelWorker {
 public:
  // A worker for `config`'s [panel] and [alerts]; `log` gets its lines.
  PanelWorker(const node::NodeConfig& config, LogSink log);
  ~PanelWorker();  // stops it
  PanelWorker(const PanelWorker&) = delete;
  PanelWorker& operator=(const PanelWorker&) = delete;

  bool panel_on() const;
  bool alerts_on() const;
  void start();
  // Stops the thread: requests in flight are abandoned. Bounded.
  void stop();

  // Any thread. The latest input; the worker decides whether a round is due.
  void offer_sync(SyncInput input);
  // Any thread. Alerts to deliver (this node is their sender).
  void deliver(std::vector<rotation::Alert> alerts);

  SyncStatus sync_status() const;
  AlertStatus alert_status() const;

 private:
  class Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace mesh::panel

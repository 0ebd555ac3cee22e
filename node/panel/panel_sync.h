// The panel sync's rounds (docs/PANELS.md), on the panel worker's thread:
// when this node is the sync owner, read the panel's hosts, plan the
// difference with the rotation (node/rotation/host_plan.h), send it in
// bulk; again after every change of the rotation, a few seconds after a
// round that changed something (to read back what it did), and at least
// every interval_ms (a host re-enabled by hand is disabled again then).
// A round that fails is retried with backoff (1 s doubling to 60 s); the
// node itself never waits for the panel.
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <set>
#include <vector>

#include "node/panel/panel_client.h"
#include "node/panel/status.h"
#include "node/rotation/host_plan.h"
#include "node/rotation/sync_owner.h"

namespace mesh::panel {

// What the daemon hands over at each tick: its latest roster, evaluation
// and write right.
struct SyncInput {
  std::shared_ptr<const Roster> roster;
  std::shared_ptr<const verdict::Evaluation> evaluation;
  rotation::OwnerView owner;
};

struct PanelSyncSettings {
  bool dry_run = false;
  std::uint32_t changes_per_minute = 10;
  DurationMs interval_ms = 180'000;
  rotation::HostMap hosts;
};

inline constexpr DurationMs kSyncBackoffMinMs = 1'000;
inline constexpr DurationMs kSyncBackoffMaxMs = 60'000;
inline constexpr DurationMs kSyncReadBackMs = 5'000;  // after a round that changed hosts

class PanelSync {
 public:
  PanelSync(std::unique_ptr<PanelClient> client, PanelSyncSettings settings, LogSink log,
            std::function<UnixMs()> wall_now);
  // A new input (the worker calls this at each tick's offer).
  void offer(SyncInput input);
  const SyncStatus& status() const { return status_; }

 private:
  bool due(const SyncInput& input, UnixMs now) const;
  void start_round(SyncInput input);
  void on_hosts(SyncInput input, HostsResult hosts);
  void on_applied(SyncInput input, rotation::SyncPlan plan, Status<PanelError> applied);
  void log_plan(const rotation::SyncPlan& plan);
  void succeed(const SyncInput& input, bool changed);
  void fail(const std::string& what, PanelError error);
  void note_right(const rotation::OwnerView& owner, DurationMs settle_ms);

  std::unique_ptr<PanelClient> client_;
  PanelSyncSettings settings_;
  LogSink log_;
  std::function<UnixMs()> wall_now_;
  rotation::ChangeBudget budget_;
  rotation::OwnerTerm term_;  // a new term writes once its view has held (rotation::owner_settle_ms)
  SyncStatus status_;
  bool in_flight_ = false;
  std::optional<SyncInput> waiting_;  // the latest offer while a round ran
  std::vector<verdict::RouteMembership> synced_routes_;  // the rotation of the last good round
  std::uint64_t synced_roster_ = 0;
  UnixMs next_due_ms_ = 0;
  UnixMs retry_at_ms_ = 0;
  std::set<std::string> disabled_by_us_;  // host ids; bounded by the panel's hosts
};

}  // namespace mesh::panel

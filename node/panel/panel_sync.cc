#include "node/panel/panel_sync.h"

#include <algorithm>

namespace mesh::panel {
namespace {

std::string host_name(const rotation::HostChange& change) {
  return "'" + change.remark + "' (" + change.host_id + ") of " + change.server;
}

}  // namespace

PanelSync::PanelSync(std::unique_ptr<PanelClient> client, PanelSyncSettings settings, LogSink log,
                     std::function<UnixMs()> wall_now)
    : client_(std::move(client)), settings_(std::move(settings)), log_(std::move(log)),
      wall_now_(std::move(wall_now)), budget_(settings_.changes_per_minute) {
  status_.kind = client_->kind();
  status_.dry_run = settings_.dry_run;
}

void PanelSync::note_right(const rotation::OwnerView& owner, DurationMs settle_ms) {
  const std::string right = rotation::to_string(owner.right);
  const std::string name = owner.owner.value_or("");
  if (right == status_.right && name == status_.owner) return;
  const bool was_owner = status_.right == "owner";
  status_.right = right;
  status_.owner = name;
  if (owner.right == rotation::WriteRight::owner) {
    log_(Severity::info, "panel_sync",
         "this node is the panel sync owner now (its first round once its view has held for " +
             std::to_string(settle_ms / 1000) + "." + std::to_string(settle_ms % 1000 / 100) + " s)",
         {{"right", right}, {"settle_ms", std::to_string(settle_ms)}});
  } else if (was_owner) {
    log_(Severity::info, "panel_sync", "this node is no longer the panel sync owner (" + right +
                                           (name.empty() ? "" : ", owner " + name) + ")",
         {{"right", right}, {"owner", name}});
  }
}

bool PanelSync::due(const SyncInput& input, UnixMs now) const {
  if (now < retry_at_ms_) return false;
  if (now >= next_due_ms_) return true;
  return input.roster->version != synced_roster_ || input.evaluation->routes != synced_routes_;
}

void PanelSync::offer(SyncInput input) {
  if (!input.roster || !input.evaluation) return;
  const UnixMs now = wall_now_();
  const DurationMs settle = rotation::owner_settle_ms(*input.roster);
  note_right(input.owner, settle);
  const bool may_write = term_.observe(input.owner.right, now, settle);
  if (input.owner.right != rotation::WriteRight::owner) {
    next_due_ms_ = 0;  // a new owner term starts with a round
    return;
  }
  if (!may_write) return;  // a new term's first round waits until this node's view has held
  if (in_flight_) {
    waiting_ = std::move(input);
    return;
  }
  if (due(input, now)) start_round(std::move(input));
}

void PanelSync::start_round(SyncInput input) {
  in_flight_ = true;
  ++status_.rounds_total;
  client_->read_hosts([this, input = std::move(input)](HostsResult hosts) mutable {
    on_hosts(std::move(input), std::move(hosts));
  });
}

void PanelSync::on_hosts(SyncInput input, HostsResult hosts) {
  if (!hosts) return fail(hosts.message(), hosts.code());
  const UnixMs now = wall_now_();
  rotation::SyncPlan plan = rotation::plan_sync(*input.roster, input.evaluation->routes, *hosts, settings_.hosts,
                                                budget_.remaining(now));
  status_.hosts = static_cast<std::uint32_t>(hosts->size());
  status_.hosts_unknown = plan.unknown_hosts;
  status_.hosts_disabled = static_cast<std::uint32_t>(
      std::count_if(hosts->begin(), hosts->end(), [](const rotation::PanelHost& h) { return !h.enabled; }));
  log_plan(plan);
  if (plan.empty() || settings_.dry_run) return succeed(input, false);
  std::vector<std::string> enable, disable;
  for (const auto& c : plan.enable) enable.push_back(c.host_id);
  for (const auto& c : plan.disable) disable.push_back(c.host_id);
  budget_.spend(now, static_cast<std::uint32_t>(enable.size() + disable.size()));
  client_->apply(enable, disable, [this, input = std::move(input), plan = std::move(plan)](Status<PanelError> applied) mutable {
    on_applied(std::move(input), std::move(plan), std::move(applied));
  });
}

// What the round found, whether or not it acts on it (dry run).
void PanelSync::log_plan(const rotation::SyncPlan& plan) {
  const std::string would = settings_.dry_run ? "dry run: would " : "";
  for (const auto& change : plan.disable) {
    const bool by_hand = disabled_by_us_.count(change.host_id) > 0;
    if (by_hand) ++status_.reenabled_by_hand_total;
    log_(Severity::warn, "panel_sync",
         would + "disable host " + host_name(change) +
             (by_hand ? ": re-enabled by hand while its server is out of rotation, disabled again"
                      : ": its server is out of rotation"),
         {{"host", change.host_id}, {"server", change.server}, {"action", "disable"},
          {"dry_run", settings_.dry_run ? "true" : "false"}});
  }
  for (const auto& change : plan.enable) {
    log_(Severity::info, "panel_sync", would + "enable host " + host_name(change) + ": its server is in rotation",
         {{"host", change.host_id}, {"server", change.server}, {"action", "enable"},
          {"dry_run", settings_.dry_run ? "true" : "false"}});
  }
  for (const auto& change : plan.kept_last) {
    ++status_.kept_last_total;
    log_(Severity::warn, "panel_sync",
         "host " + host_name(change) + " stays enabled: disabling it would leave a route with no enabled host",
         {{"host", change.host_id}, {"server", change.server}, {"action", "keep"}});
  }
  if (plan.deferred > 0) {
    status_.deferred_total += plan.deferred;
    log_(Severity::warn, "panel_sync",
         std::to_string(plan.deferred) + " host changes deferred: over changes_per_minute (" +
             std::to_string(settings_.changes_per_minute) + ")",
         {{"deferred", std::to_string(plan.deferred)}});
  }
}

void PanelSync::on_applied(SyncInput input, rotation::SyncPlan plan, Status<PanelError> applied) {
  if (!applied) return fail(applied.message(), applied.code());
  status_.enabled_total += plan.enable.size();
  status_.disabled_total += plan.disable.size();
  for (const auto& c : plan.enable) disabled_by_us_.erase(c.host_id);
  for (const auto& c : plan.disable) disabled_by_us_.insert(c.host_id);
  succeed(input, true);
}

void PanelSync::succeed(const SyncInput& input, bool changed) {
  const UnixMs now = wall_now_();
  if (status_.failures_in_row > 0) {
    log_(Severity::info, "panel_sync", "the panel answers again", {{"failures", std::to_string(status_.failures_in_row)}});
  }
  in_flight_ = false;
  status_.failures_in_row = 0;
  status_.last_error.clear();
  status_.last_sync_ms = now;
  synced_roster_ = input.roster->version;
  synced_routes_ = input.evaluation->routes;
  next_due_ms_ = now + (changed ? kSyncReadBackMs : settings_.interval_ms);
  retry_at_ms_ = 0;
  if (waiting_) {
    SyncInput next = std::move(*waiting_);
    waiting_.reset();
    offer(std::move(next));
  }
}

void PanelSync::fail(const std::string& what, PanelError error) {
  const UnixMs now = wall_now_();
  in_flight_ = false;
  ++status_.requests_failed_total;
  ++status_.failures_in_row;
  const std::uint32_t doublings = std::min<std::uint32_t>(status_.failures_in_row - 1, 6);
  const DurationMs backoff = std::min(kSyncBackoffMaxMs, kSyncBackoffMinMs << doublings);
  retry_at_ms_ = now + backoff;
  if (what != status_.last_error) {
    log_(Severity::warn, "panel_sync",
         std::string("panel round failed (") + to_string(error) + "): " + what + "; retrying in " +
             std::to_string(backoff / 1000) + " s, with backoff",
         {{"reason", to_string(error)}, {"failures", std::to_string(status_.failures_in_row)}});
  }
  status_.last_error = what;
  waiting_.reset();  // the next tick's offer brings the latest input
}

}  // namespace mesh::panel

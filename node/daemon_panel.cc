// The daemon's side of the panel sync and the alerts (docs/PANELS.md): at
// every tick, on the strand, it works out this node's write right from its
// own evaluation and the reports it holds now (node/rotation/sync_owner.h),
// tracks the transitions (node/rotation/alert_tracker.h), and hands both to
// the panel worker, which does the talking on its own thread.
#include "node/daemon_impl.h"
#include "node/log.h"

namespace mesh::node {
namespace {

LogLevel level_of(panel::Severity severity) {
  switch (severity) {
    case panel::Severity::info: return LogLevel::info;
    case panel::Severity::warn: return LogLevel::warn;
    case panel::Severity::error: return LogLevel::error;
  }
  return LogLevel::info;
}

}  // namespace

void Daemon::open_panel() {
  rotation::AlertSettings settings;
  settings.flap_changes = config_.alerts.flap_changes;
  settings.flap_window_ms = config_.alerts.flap_window_ms;
  settings.settle_ms = config_.alerts.settle_ms;
  alert_tracker_ = rotation::AlertTracker(settings);
  panel_ = std::make_unique<panel::PanelWorker>(
      config_, [](panel::Severity severity, const std::string& event, const std::string& message,
                  const panel::Fields& fields) {
        LogFields logged;
        for (const auto& [key, value] : fields) logged.emplace_back(key, value);
        log_event(level_of(severity), event, message, logged);
      });
  if (panel_->panel_on()) {
    log_event(LogLevel::info, "panel_sync",
              std::string("panel sync with ") + to_string(config_.panel.kind) + " at " + config_.panel.url +
                  (config_.panel.dry_run ? " (dry run: changes are logged, not made)" : ""),
              {{"kind", to_string(config_.panel.kind)}, {"dry_run", config_.panel.dry_run}});
  }
  panel_->start();
}

void Daemon::drive_panel() {
  if (!panel_ || (!panel_->panel_on() && !panel_->alerts_on())) return;
  auto verdicts = agent_->verdicts();
  auto roster = agent_->core().shared_roster();
  if (!verdicts || !roster || verdicts->roster_version != roster->version ||
      verdicts->servers.size() != roster->servers.size()) {
    return;
  }
  const UnixMs now = wall_now();
  rotation::ReportTimes times;
  times.now_ms = now;
  for (std::uint32_t i = 0; i < roster->servers.size(); ++i) {
    auto held = agent_->core().report_of(i);
    times.last_report_ms.push_back(held ? held->envelope->timestamp_ms : 0);
    times.warming.push_back(held && held->report != nullptr && held->report->warming);
    times.alert_sender.push_back(held && held->report != nullptr && held->report->alert_sender);
  }
  const bool clock_suspect = agent_->clock(now).suspect != agent::ClockSuspect::none;
  const bool warming = agent_->warming(now);
  if (panel_->panel_on()) {
    panel_->offer_sync(panel::SyncInput{roster, verdicts,
                                        rotation::write_right(*roster, *verdicts, times, config_.panel.candidates,
                                                              config_.node_id, clock_suspect, warming)});
  }
  if (!panel_->alerts_on()) return;
  const rotation::OwnerView sender = rotation::write_right(*roster, *verdicts, times, config_.alerts.candidates,
                                                           config_.node_id, clock_suspect, warming);
  // Warming, what moves in this node's view is mostly its own catching up
  // (node/agent/warm_up.h); with its clock suspect, its verdicts are
  // evaluated at a guess of the fleet's time, and they jump back when the
  // suspicion ends (a restarted sender's did, 3 s after its start, and it
  // sent a flapping server's hold-down a second time: the alert soak G).
  // A sound sender tells what happens. The tracker sees the end of either
  // even when the verdicts did not move, so that only the evaluation it
  // ended in is silent too.
  const bool catching_up = warming || clock_suspect;
  if (verdicts != tracked_verdicts_ || catching_up != tracked_catching_up_) {
    alert_tracker_.observe(*roster, *verdicts, catching_up);
    tracked_verdicts_ = verdicts;
    tracked_catching_up_ = catching_up;
  }
  const bool sending = sender.right == rotation::WriteRight::owner;
  agent_->set_alert_sender(sending);  // its reports say so: the others drop only what a sender claimed
  if (sending) {
    panel_->deliver(alert_tracker_.take_pending());
    return;
  }
  // A sender's claim (its report saying it sends) dealt with what it saw up
  // to then; a node this one merely names as the sender may not see itself
  // as one (under load views differ: the soak's run A lost transitions
  // so). Without any claim the transitions wait for a takeover, but not
  // longer than twice what a silent sender takes to be replaced.
  UnixMs handled = now - 2 * rotation::owner_report_age_max_ms(*roster);
  if (auto claim = rotation::latest_sender_claim(times)) handled = std::max(handled, *claim);
  alert_tracker_.drop_handled(handled - kAlertHandoverMarginMs);
}

}  // namespace mesh::node

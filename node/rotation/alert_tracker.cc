#include "node/rotation/alert_tracker.h"

#include "node/rotation/country_routes.h"

namespace mesh::rotation {
namespace {

// "RU 3/3, NL 0/2": the countries whose witnesses fail the server.
std::string failing_by_country(const verdict::ServerVerdict& verdict) {
  std::string out;
  for (const verdict::CountryTally& row : verdict.by_country) {
    if (row.failing == 0) continue;
    out += (out.empty() ? "" : ", ") + row.country + " " + std::to_string(row.failing) + "/" +
           std::to_string(row.eligible);
  }
  return out;
}

std::string caption_of(const verdict::ServerVerdict& verdict, const std::string& state) {
  if (!verdict.caption.empty()) return verdict.caption;
  if (state == "held_out") return "Held out of rotation";
  return "In rotation again";
}

}  // namespace

std::string alert_state(const verdict::ServerVerdict& verdict, bool global_in) {
  const bool rotating_status =
      verdict.status == verdict::ServerStatus::ok || verdict.status == verdict::ServerStatus::no_data;
  if (rotating_status && !global_in) return "held_out";
  return verdict::to_string(verdict.status);
}

const char* to_string(Alert::Kind kind) {
  switch (kind) {
    case Alert::Kind::transition: return "transition";
    case Alert::Kind::flapping: return "flapping";
    case Alert::Kind::settled: return "settled";
  }
  return "?";
}

void AlertTracker::observe(const Roster& roster, const verdict::Evaluation& evaluation, bool catching_up) {
  if (evaluation.servers.size() != roster.servers.size()) return;
  catching_up_ = catching_up || was_catching_up_;
  was_catching_up_ = catching_up;
  if (roster.version != roster_version_) {
    tracks_.clear();  // a new roster: its first evaluation is the baseline
    roster_version_ = roster.version;
    baseline_ms_ = evaluation.now_ms;
    catch_up_ms_ = roster.params.stale_after_ms;
  }
  const std::vector<bool> global = global_rotation(roster, evaluation);
  for (std::uint32_t s = 0; s < roster.servers.size(); ++s) {
    track(roster, evaluation.servers[s], global[s], evaluation.now_ms);
  }
}

void AlertTracker::track(const Roster& roster, const verdict::ServerVerdict& verdict, bool global_in,
                         UnixMs now) {
  const std::string state = alert_state(verdict, global_in);
  auto [it, fresh] = tracks_.try_emplace(verdict.id);
  ServerTrack& track = it->second;
  if (fresh) {
    track.state = state;
    track.last_change_ms = now;
    return;
  }
  const ServerEntry& entry = *roster.find(verdict.id);
  Alert alert{Alert::Kind::transition, verdict.id, entry.country, entry.routes, track.state, state,
              caption_of(verdict, state), failing_by_country(verdict), now, global_in};
  if (state == track.state) {
    if (track.damped && now - track.last_change_ms >= settle_ms()) {
      track.damped = false;
      track.changes.clear();
      alert.kind = Alert::Kind::settled;
      alert.from = "flapping";
      push(std::move(alert));
    }
    return;
  }
  const bool catching_up = catching_up_ || (track.state == "no_data" && now - baseline_ms_ < catch_up_ms_);
  track.state = state;
  track.last_change_ms = now;
  if (catching_up) return;
  track.changes.push_back(now);
  while (!track.changes.empty() && now - track.changes.front() > settings_.flap_window_ms) track.changes.pop_front();
  while (track.changes.size() > settings_.flap_changes) track.changes.pop_front();
  if (track.damped) return;  // one "flapping" message, then quiet until it settles
  if (track.changes.size() >= settings_.flap_changes) {
    track.damped = true;
    alert.kind = Alert::Kind::flapping;
    alert.caption = "Flapping: " + std::to_string(track.changes.size()) + " changes in the last " +
                    std::to_string(settings_.flap_window_ms / 60'000) + " min; quiet until it settles";
  }
  push(std::move(alert));
}

void AlertTracker::push(Alert alert) {
  pending_.push_back(std::move(alert));
  while (pending_.size() > settings_.pending_max) pending_.pop_front();
}

std::vector<Alert> AlertTracker::take_pending() {
  std::vector<Alert> out(std::make_move_iterator(pending_.begin()), std::make_move_iterator(pending_.end()));
  pending_.clear();
  return out;
}

void AlertTracker::drop_handled(UnixMs handled_before_ms) {
  while (!pending_.empty() && pending_.front().at_ms <= handled_before_ms) pending_.pop_front();
}

}  // namespace mesh::rotation

#include "tools/meshsim/scenario.h"

#include "tools/meshsim/duration.h"
#include "tools/meshsim/error.h"

namespace mesh::sim {

const char* to_string(EventKind kind) {
  switch (kind) {
    case EventKind::block: return "block";
    case EventKind::unblock: return "unblock";
    case EventKind::stop_agent: return "stop_agent";
    case EventKind::start_agent: return "start_agent";
    case EventKind::service_down: return "service_down";
    case EventKind::service_up: return "service_up";
    case EventKind::listener_down: return "listener_down";
    case EventKind::listener_up: return "listener_up";
    case EventKind::node_down: return "node_down";
    case EventKind::node_up: return "node_up";
    case EventKind::unreliable_on: return "unreliable_on";
    case EventKind::unreliable_off: return "unreliable_off";
    case EventKind::clock_skew: return "clock_skew";
    case EventKind::partition: return "partition";
    case EventKind::heal: return "heal";
    case EventKind::set_link: return "set_link";
    case EventKind::roster_add: return "roster_add";
    case EventKind::roster_remove: return "roster_remove";
    case EventKind::inject_forged: return "inject_forged";
  }
  return "?";
}

const char* to_string(GossipLoss loss) {
  return loss == GossipLoss::stream ? "stream" : "frames";
}

const char* to_string(BlockPort port) {
  switch (port) {
    case BlockPort::all: return "all";
    case BlockPort::probe: return "probe";
    case BlockPort::gossip: return "gossip";
    case BlockPort::sni: return "sni";
  }
  return "unknown";
}

const char* to_string(ExpectKind kind) {
  switch (kind) {
    case ExpectKind::status: return "status";
    case ExpectKind::status_during: return "status_during";
    case ExpectKind::no_false_verdicts: return "no_false_verdicts";
    case ExpectKind::no_missed_verdicts: return "no_missed_verdicts";
    case ExpectKind::digests_agree: return "digests_agree";
    case ExpectKind::unreliable: return "unreliable";
    case ExpectKind::in_rotation: return "in_rotation";
    case ExpectKind::out_of_rotation: return "out_of_rotation";
    case ExpectKind::counter_at_least: return "counter_at_least";
    case ExpectKind::counter_at_most: return "counter_at_most";
    case ExpectKind::dissemination_rounds_max: return "dissemination_rounds_max";
    case ExpectKind::duplicate_factor_max: return "duplicate_factor_max";
    case ExpectKind::partitioned_flips_max: return "partitioned_flips_max";
    case ExpectKind::rotation_changes_max: return "rotation_changes_max";
  }
  return "?";
}

const char* to_string(ScenarioError error) {
  switch (error) {
    case ScenarioError::unreadable: return "unreadable";
    case ScenarioError::syntax: return "syntax";
    case ScenarioError::bad_field: return "bad_field";
    case ScenarioError::unknown_field: return "unknown_field";
    case ScenarioError::invalid: return "invalid";
    case ScenarioError::unknown_scenario: return "unknown_scenario";
  }
  return "?";
}

std::string Expectation::text() const {
  std::string out = to_string(kind);
  if (!node.empty()) out += " (at " + node + ")";
  switch (kind) {
    case ExpectKind::status:
      return out + " " + server + " " + verdict::to_string(status) + " at " + format_duration(at_ms);
    case ExpectKind::status_during:
      return out + " " + server + " " + verdict::to_string(status) + " from " +
             format_duration(from_ms) + " to " + format_duration(to_ms);
    case ExpectKind::unreliable: return out + " " + server + " at " + format_duration(at_ms);
    case ExpectKind::in_rotation:
    case ExpectKind::out_of_rotation:
      return out + " " + server + " in " + route + " at " + format_duration(at_ms);
    case ExpectKind::digests_agree:
      return out + " within " + format_duration(at_ms) + ".." + format_duration(to_ms) +
             (lag_ms != kConvergedLagMs ? " (records " + format_duration(lag_ms) + " old)" : "");
    case ExpectKind::counter_at_least:
    case ExpectKind::counter_at_most:
      return out + " " + counter + " " + std::to_string(value);
    case ExpectKind::dissemination_rounds_max:
    case ExpectKind::duplicate_factor_max:
    case ExpectKind::partitioned_flips_max: return out + " " + std::to_string(value);
    case ExpectKind::rotation_changes_max:
      return out + " " + server + " in " + route + " " + std::to_string(value);
    case ExpectKind::no_false_verdicts:
    case ExpectKind::no_missed_verdicts: return out;
  }
  return out;
}

}  // namespace mesh::sim

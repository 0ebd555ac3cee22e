// Built-ins that hold confirmations to their budget (node/agent/confirmation.h,
// docs/PROTOCOL.md "Probes"): a failure seen by one observer only, and a
// target that fails at every other probe, must cost the fleet a bounded
// number of probes and make no verdict.
#include "tools/meshsim/builtin_builder.h"

namespace mesh::sim {

// For an hour one observer loses most packets to one target: half of its
// probes of it fail (3 SYN attempts, each passing with 0.21). Full mesh, so
// the observer is a witness and every other server too: each of its first
// failures is published and brings the target's other witnesses' probes
// forward, within each target's budget. The target stays ok everywhere.
void flaky_observer(Builder& b) {
  const ServerId observer = b.of_country(0, 0);
  const ServerId target = b.last();
  b.s.params.witnesses_per_country = 0;
  Event& lossy = b.event(5 * kMinute, EventKind::set_link);
  lossy.from.servers = {observer};
  lossy.to.servers = {target};
  lossy.link.loss_permille = 790;
  Event& healed = b.event(65 * kMinute, EventKind::set_link);
  healed.from.servers = {observer};
  healed.to.servers = {target};
  healed.link = b.s.link_defaults;
  b.status_during(target, ServerStatus::ok, 5 * kMinute, 70 * kMinute);
  b.no_false_verdicts();
  b.s.duration_ms = 70 * kMinute;
}

// For an hour a server's probes fail 15 s of every minute, from everyone
// (a flapping path to its port; gossip passes): streaks begin at every
// probe that falls in the 15 s, and each is confirmed within seconds, by
// probes that get through (a streak's last probe starts 15 s after its
// first, kStreakSpanMs: an outage must last 18 s to fail it; outage and
// span were both 20 s until 2026-12-06). No verdict, and every observer's confirmation
// rounds stay within the target's budget.
void flapping_target(Builder& b) {
  const ServerId target = b.of_country(1 % b.k, 0);
  for (DurationMs at = 5 * kMinute; at < 65 * kMinute; at += kMinute) {
    Event& block = b.event(at, EventKind::block, {target});
    block.name = "flap";
    block.from.all = true;
    block.port = BlockPort::probe;
    b.event(at + 15'000, EventKind::unblock).name = "flap";
  }
  b.status_during(target, ServerStatus::ok, 5 * kMinute, 70 * kMinute);
  b.no_false_verdicts();
  b.s.duration_ms = 70 * kMinute;
}

}  // namespace mesh::sim

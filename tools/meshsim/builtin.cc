#include "tools/meshsim/builtin.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <map>
#include <numeric>

#include "record/fleet_scale.h"
#include "tools/meshsim/builtin_builder.h"
#include "tools/meshsim/fleet_gen.h"
#include "verdict/witnesses.h"

namespace mesh::sim {
namespace {

// A country (the last one) blocks two servers of the first from 5m to 20m
// (`port`: every connection, or only TLS handshakes with their SNI); both
// become unreachable on every node by 15m, then heal.
void two_server_block(Builder& b, const char* name, BlockPort port) {
  const std::uint32_t blocker = b.k - 1;
  ServerId a = b.of_country(0, 0), c = b.of_country(0, 1);
  Event& block = b.event(5 * kMinute, EventKind::block, {a, c});
  block.name = name;
  block.from.countries = {b.country(blocker)};
  block.port = port;
  b.event(20 * kMinute, EventKind::unblock).name = name;
  b.status(a, ServerStatus::unreachable, 15 * kMinute);
  b.status(c, ServerStatus::unreachable, 15 * kMinute);
  b.rotation(a, b.route_of(0), false, 15 * kMinute);
  b.status_during(b.last(), ServerStatus::ok, 5 * kMinute, 30 * kMinute);
  b.status(a, ServerStatus::ok, 29 * kMinute);
  b.no_false_verdicts();
  b.s.duration_ms = 30 * kMinute;
}

// An IP block: packets dropped, so the probes' SYNs go unanswered.
void country_block(Builder& b) {
  two_server_block(b, "country-block", BlockPort::all);
  b.s.snapshots = {4 * kMinute, 15 * kMinute};
}

// An SNI block (a DPI box resets the TLS handshakes carrying their SNI; TCP
// connects and gossip pass): found by the TLS probes (the country's turn
// every tls_every intervals, then every probe of its compatriot witnesses
// while the TLS stage fails) within 10 minutes.
void sni_block(Builder& b) { two_server_block(b, "sni-block", BlockPort::sni); }

// A country (the last) blocks `percent`% of the servers abroad, both ways,
// at 5m, with 0.5% loss on every link: exactly those become unreachable
// (its own servers stay ok: the blocked servers' failures to reach them are
// its border seen from the other side). With `heal`, the block lifts at 25m
// and all are ok again, the blocking country's servers throughout (the far
// side of a border that has just lifted: docs/VERDICTS.md, rule 6).
void mass_block(Builder& b, std::uint32_t percent, bool heal) {
  const std::uint32_t blocker = b.k - 1;
  const std::uint32_t n = b.s.fleet.generated_nodes;
  b.s.link_defaults.loss_permille = 5;
  std::vector<ServerId> abroad;
  for (std::uint32_t i = 0; i < n; ++i) {
    if (i % b.k != blocker) abroad.push_back(b.id(i));
  }
  // A fixed scramble, so the share spreads over every other country.
  std::vector<ServerId> blocked;
  const std::size_t count = (abroad.size() * percent + 50) / 100;
  for (std::size_t j = 0; blocked.size() < count; ++j) blocked.push_back(abroad[(j * 7) % abroad.size()]);
  Event& block = b.event(5 * kMinute, EventKind::block, blocked);
  block.name = "mass-block";
  block.from.countries = {b.country(blocker)};
  block.both_directions = true;
  if (heal) b.event(25 * kMinute, EventKind::unblock).name = "mass-block";
  for (const ServerId& server : blocked) b.status(server, ServerStatus::unreachable, 15 * kMinute);
  for (std::uint32_t nth = 0; nth < n / b.k; ++nth) {
    b.status_during(b.of_country(blocker, nth), ServerStatus::ok, 5 * kMinute, 35 * kMinute);
  }
  b.status(blocked.front(), heal ? ServerStatus::ok : ServerStatus::unreachable, 34 * kMinute);
  b.no_false_verdicts();
  b.s.duration_ms = 35 * kMinute;
}

// The fleet splits in two groups that cut through every country (a
// provider's outage, not a border) for 10 minutes: nobody is marked
// unreachable from either side, every server stays in rotation, and after
// the heal all are ok again.
// One server in `left_every` (rounded down) on one side, whatever --nodes.
void partition_split(Builder& b, std::uint32_t left_every) {
  const std::uint32_t n = b.s.fleet.generated_nodes;
  const std::uint32_t left_count = n / left_every;
  // A stride coprime with n visits every server once.
  std::uint32_t stride = 11;
  while (std::gcd(stride, n) != 1) ++stride;
  Selector left, right;
  for (std::uint32_t j = 0; j < n; ++j) {
    // Every other run of k servers shifts by one, so each country has
    // servers on both sides.
    const std::uint32_t i = (j * stride) % n;
    (j < left_count ? left : right).servers.push_back(b.id(i));
  }
  b.event(5 * kMinute, EventKind::partition).groups = {left, right};
  b.event(15 * kMinute, EventKind::heal);
  for (const Selector* side : {&left, &right}) {
    for (std::size_t j = 0; j < side->servers.size(); j += 3) {
      const ServerId& server = side->servers[j];
      b.rotation(server, "global", true, 10 * kMinute);
      b.rotation(server, "global", true, 14 * kMinute);
      b.status(server, ServerStatus::ok, 24 * kMinute);
    }
  }
  b.no_false_verdicts();
  b.s.duration_ms = 25 * kMinute;
}

// A stateful border firewall: connections opened from the last country to
// one server fail, connections the other way work (its probes of that
// country succeed, its gossip reaches it). A second server has only its
// port 443 dropped from that country, both ways; gossip passes. Both are
// unreachable from that country alone; nobody else is marked.
void one_way_block(Builder& b) {
  const std::uint32_t blocker = b.k - 1;
  ServerId one_way = b.of_country(0, 0), probe_only = b.of_country(1, 0);
  Event& firewall = b.event(5 * kMinute, EventKind::block, {one_way});
  firewall.name = "firewall";
  firewall.from.countries = {b.country(blocker)};
  firewall.connections_only = true;
  Event& port = b.event(5 * kMinute, EventKind::block, {probe_only});
  port.name = "port-443";
  port.from.countries = {b.country(blocker)};
  port.both_directions = true;
  port.port = BlockPort::probe;
  b.event(20 * kMinute, EventKind::unblock).name = "firewall";
  b.event(20 * kMinute, EventKind::unblock).name = "port-443";
  b.status(one_way, ServerStatus::unreachable, 15 * kMinute);
  b.status(probe_only, ServerStatus::unreachable, 15 * kMinute);
  b.status_during(b.of_country(blocker, 0), ServerStatus::ok, 5 * kMinute, 30 * kMinute);
  b.status_during(b.of_country(0, 1), ServerStatus::ok, 5 * kMinute, 30 * kMinute);
  b.status(one_way, ServerStatus::ok, 29 * kMinute);
  b.status(probe_only, ServerStatus::ok, 29 * kMinute);
  b.no_false_verdicts();
  b.s.duration_ms = 30 * kMinute;
}

// 10% loss and jitter on every link for an hour: no false verdict.
void lossy(Builder& b) {
  b.s.link_defaults = LinkSpec{100, 30, 50};
  b.s.snapshots = {30 * kMinute};
  b.no_false_verdicts();
  b.status(b.last(), ServerStatus::ok, 55 * kMinute);
  b.digests_agree(50 * kMinute, 53 * kMinute);
  b.s.duration_ms = 60 * kMinute;
}

// The same loss with each gossip frame a datagram: a frame is lost whole,
// as no TCP connection loses one. A stress test of the repair paths (IHAVE,
// GRAFT, SYNC) that a TCP fleet uses only when connections break.
void lossy_frames(Builder& b) {
  lossy(b);
  b.s.sim.gossip_loss = GossipLoss::frames;
}

// One observer loses its outbound traffic to half its neighbours: it is
// listed as unreliable and its votes do not make anyone unreachable.
void unreliable_witness(Builder& b) {
  ServerId observer = b.id(0);
  b.event(5 * kMinute, EventKind::unreliable_on, {observer});
  Expectation& e = b.expect(ExpectKind::unreliable);
  e.server = observer;
  e.at_ms = 15 * kMinute;
  e.exclude_server = true;
  b.s.snapshots = {15 * kMinute};
  b.no_false_verdicts();
  b.status_during(b.last(), ServerStatus::ok, 5 * kMinute, 30 * kMinute);
  b.s.duration_ms = 30 * kMinute;
}

// The agent stops (listener still up): no_data, still in rotation; back to ok after a restart.
void agent_stop(Builder& b) {
  ServerId server = b.of_country(1, 0);
  // Its last heartbeat goes stale stale_after_ms (12 min; above 128 servers
  // scaled with the fleet, docs/CONFIG.md "Fleet size") after it was made.
  const DurationMs stale = effective_stale_after_ms(b.s.params, b.s.fleet.generated_nodes);
  const DurationMs silent = 5 * kMinute + stale + kMinute;
  b.event(5 * kMinute, EventKind::stop_agent, {server});
  b.event(silent + 2 * kMinute, EventKind::start_agent, {server});
  b.status(server, ServerStatus::no_data, silent);
  b.rotation(server, b.route_of(1), true, silent);
  b.status(server, ServerStatus::ok, silent + 5 * kMinute);
  b.no_false_verdicts();
  b.s.duration_ms = silent + 6 * kMinute;
}

// A rolling restart (an upgrade): every agent restarts in turn, one every
// 5m / n from 1m, each down for a second. Nothing may be marked; the
// records converge and every server is ok after it. Each agent starts its
// self-checks afresh, as in a fleet whose servers were started over days;
// its heartbeats fall back on the fleet's grid (docs/PROTOCOL.md §9 says
// what spread heartbeats cost before the grid).
void rolling_restart(Builder& b) {
  const std::uint32_t n = b.s.fleet.generated_nodes;
  const DurationMs step = 5 * kMinute / n;
  for (std::uint32_t i = 0; i < n; ++i) {
    const DurationMs at = kMinute + static_cast<DurationMs>(i) * step;
    b.event(at, EventKind::stop_agent, {b.id(i)});
    b.event(at + 1'000, EventKind::start_agent, {b.id(i)});
  }
  b.digests_agree(12 * kMinute, 14 * kMinute);
  for (std::uint32_t c = 0; c < b.k; ++c) b.status(b.of_country(c, 0), ServerStatus::ok, 14 * kMinute);
  b.no_false_verdicts();
  b.s.duration_ms = 15 * kMinute;
}

// The VPN service stops: unavailable and out of rotation; it heals when the service returns.
void service_down(Builder& b) {
  ServerId server = b.of_country(2 % b.k, 0);
  b.event(5 * kMinute, EventKind::service_down, {server});
  b.event(10 * kMinute, EventKind::service_up, {server});
  b.status(server, ServerStatus::unavailable, 8 * kMinute);
  b.rotation(server, b.route_of(2 % b.k), false, 8 * kMinute);
  b.status(server, ServerStatus::ok, 14 * kMinute);
  b.rotation(server, b.route_of(2 % b.k), true, 14 * kMinute);
  b.no_false_verdicts();
  b.s.duration_ms = 15 * kMinute;
}

// Two fifths of the countries (two of the default five) are cut off from
// the rest for ten minutes; after the heal every node converges on one
// digest. Two fifths at every size: two of 20 countries cut off are a
// tenth of the fleet, below rule 9's quarter, and a tenth of a fleet
// silent and unreachable is judged (docs/VERDICTS.md, "Partitions").
void partition_heal(Builder& b) {
  Event& cut = b.event(5 * kMinute, EventKind::partition);
  Selector side;
  const std::uint32_t cut_countries = std::max<std::uint32_t>(1, (2 * b.k + 2) / 5);
  for (std::uint32_t c = 0; c < cut_countries; ++c) side.countries.push_back(b.country(c));
  cut.groups = {side};
  b.event(15 * kMinute, EventKind::heal);
  b.digests_agree(20 * kMinute, 22 * kMinute);
  b.status(b.last(), ServerStatus::ok, 24 * kMinute);
  b.status(b.id(0), ServerStatus::ok, 24 * kMinute);
  b.no_false_verdicts();
  b.s.duration_ms = 25 * kMinute;
}

// A machine is off for twenty minutes; when it is back its restarted agent
// loads its stored records and catches up on everything it missed.
void restart_catch_up(Builder& b) {
  ServerId server = b.of_country(3 % b.k, 0);
  b.event(5 * kMinute, EventKind::node_down, {server});
  b.event(25 * kMinute, EventKind::node_up, {server});
  b.status(server, ServerStatus::unreachable, 15 * kMinute);
  b.digests_agree(30 * kMinute, 32 * kMinute);
  b.status(server, ServerStatus::ok, 34 * kMinute);
  b.no_false_verdicts();
  b.s.duration_ms = 35 * kMinute;
}

// The operator adds two servers, later removes one: the roster spreads by
// gossip, the new servers get verdicts, the removed one's records go.
void roster_change(Builder& b) {
  Event& add = b.event(5 * kMinute, EventKind::roster_add);
  add.add = {ServerSpec{"added-1", b.country(0), {}}, ServerSpec{"added-2", b.country(1 % b.k), {}}};
  ServerId removed = b.of_country(b.k - 1, 0);
  b.event(15 * kMinute, EventKind::roster_remove, {removed});
  b.status("added-1", ServerStatus::ok, 12 * kMinute);
  b.rotation("added-1", "global", true, 12 * kMinute);
  b.status("added-2", ServerStatus::ok, 12 * kMinute);
  b.digests_agree(20 * kMinute, 22 * kMinute);
  b.counter("records_erased", 1);
  b.no_false_verdicts();
  b.s.duration_ms = 25 * kMinute;
}

// A non-member injects forged frames and records, and frames are tampered
// in flight: all refused and counted, nothing stored.
void forged_injection(Builder& b) {
  const std::uint32_t n = b.s.fleet.generated_nodes;
  b.event(5 * kMinute, EventKind::inject_forged).tamper_frames = 8;
  b.counter("frames_unknown_sender", n);
  b.counter("records_bad_signature", 3 * n);
  b.counter("records_unknown_origin", n);
  b.counter("frames_undecryptable", 8);
  b.counter("forged_accepted", 0, false);
  b.digests_agree(8 * kMinute, 10 * kMinute);
  b.no_false_verdicts();
  b.s.duration_ms = 11 * kMinute;
}

// One clock runs 20 s ahead (within max_clock_skew_ms: nothing changes).
// Another runs 5 minutes behind: its reports arrive 5 minutes old, within
// stale_after_ms (12 min), so the others still show it ok; it refuses
// everyone else's records as future-dated (records_future).
// A third runs 10 minutes ahead: the others refuse its reports (no_data,
// still in rotation), and it notices that every report arrives 10 minutes
// old, so it evaluates at the fleet's time and still shows the fleet ok
// instead of all no_data. Once the clocks are fixed, SYNC repairs them and
// all digests agree.
void clock_skew(Builder& b) {
  ServerId slight = b.of_country(1, 0), behind = b.of_country(2 % b.k, 1),
           ahead = b.of_country(3 % b.k, 2);
  b.event(5 * kMinute, EventKind::clock_skew, {slight}).skew_ms = 20'000;
  b.event(5 * kMinute, EventKind::clock_skew, {behind}).skew_ms = -5 * kMinute;
  b.event(5 * kMinute, EventKind::clock_skew, {ahead}).skew_ms = 10 * kMinute;
  b.event(20 * kMinute, EventKind::clock_skew, {behind}).skew_ms = 0;
  b.event(20 * kMinute, EventKind::clock_skew, {ahead}).skew_ms = 0;
  b.status(b.of_country(0, 0), ServerStatus::ok, 12 * kMinute);
  b.s.expectations.back().node = ahead;
  // (At a node with a correct clock: the one 5 minutes behind still holds
  // a report of `ahead` from before its skew that looks fresh to it.)
  // Their last accepted heartbeats go stale by 5m + stale_after_ms (12 min).
  b.status(ahead, ServerStatus::no_data, 18 * kMinute);
  b.s.expectations.back().node = b.of_country(0, 1);
  b.rotation(ahead, b.route_of(3 % b.k), true, 18 * kMinute);
  b.s.expectations.back().node = b.of_country(0, 1);
  b.status(slight, ServerStatus::ok, 18 * kMinute);
  b.s.expectations.back().node = b.of_country(0, 1);
  b.status(behind, ServerStatus::ok, 18 * kMinute);
  b.s.expectations.back().exclude_server = true;
  b.rotation(behind, b.route_of(2 % b.k), true, 18 * kMinute);
  b.s.expectations.back().exclude_server = true;
  b.counter("records_future", 1);
  b.digests_agree(23 * kMinute, 25 * kMinute);
  // Fixed at 20m, it is heard again by its next heartbeat at the latest.
  b.status(behind, ServerStatus::ok, 26 * kMinute);
  b.no_false_verdicts();
  b.s.duration_ms = 27 * kMinute;
}

// The witness plan is re-drawn at 20m: a blocked server stays unreachable
// across the switch, a healthy one stays ok. With an SNI block, the next
// epoch's witnesses in the blocking country must start their TLS streaks in
// the warm-up, before their turns (docs/PROTOCOL.md, "Probes": a
// compatriot's TLS failure), or at the switch a country is split and the
// verdict lapses.
void epoch_boundary(Builder& b, BlockPort port) {
  // The switch falls at 20m (epochs are longer above 128 servers: record/fleet_scale.h).
  const std::size_t servers = b.s.fleet.generated_nodes;
  const std::uint64_t epoch = verdict::epoch_of(b.s.start_unix_ms, b.s.params, servers);
  b.s.start_unix_ms = verdict::epoch_start_ms(epoch + 1, b.s.params, servers) - 20 * kMinute;
  ServerId blocked = b.of_country(0, 0);
  Event& block = b.event(3 * kMinute, EventKind::block, {blocked});
  block.name = "blocked";
  block.from.countries = {b.country(b.k - 1)};
  block.port = port;
  // An SNI block is found within 9.5 minutes at worst, an IP block sooner.
  const DurationMs shown = (port == BlockPort::sni ? 13 : 12) * kMinute;
  b.status_during(blocked, ServerStatus::unreachable, shown, 35 * kMinute);
  b.status_during(b.last(), ServerStatus::ok, 3 * kMinute, 35 * kMinute);
  b.no_false_verdicts();
  b.s.duration_ms = 35 * kMinute;
}

// Nothing happens: measures dissemination rounds, duplicates and bytes.
void dissemination(Builder& b) {
  const double n = b.s.fleet.generated_nodes;
  Expectation& rounds = b.expect(ExpectKind::dissemination_rounds_max);
  rounds.value = static_cast<std::uint64_t>(std::floor(2.0 * std::log2(n)));
  b.expect(ExpectKind::duplicate_factor_max).value = 1500;
  b.digests_agree(10 * kMinute, 11 * kMinute);
  b.no_false_verdicts();
  b.s.duration_ms = 15 * kMinute;
}

struct Entry {
  std::uint32_t nodes;
  std::uint32_t countries;
  std::function<void(Builder&)> build;
};

const std::map<std::string, Entry>& table() {
  static const std::map<std::string, Entry> kTable{
      {"country-block", {60, 5, country_block}},
      {"lossy", {40, 5, lossy}},
      {"lossy-frames", {40, 5, lossy_frames}},
      {"mass-block-20", {30, 5, [](Builder& b) { mass_block(b, 20, true); }}},
      {"mass-block-60", {30, 5, [](Builder& b) { mass_block(b, 60, true); }}},
      {"mass-block-80", {30, 5, [](Builder& b) { mass_block(b, 80, true); }}},
      {"partition-half", {30, 5, [](Builder& b) { partition_split(b, 2); }}},
      {"partition-uneven", {30, 5, [](Builder& b) { partition_split(b, 3); }}},
      {"one-way-block", {30, 5, one_way_block}},
      {"unreliable-witness", {40, 5, unreliable_witness}},
      {"agent-stop", {20, 5, agent_stop}},
      {"rolling-restart", {30, 5, rolling_restart}},
      {"sni-block", {20, 5, sni_block}},
      {"service-down", {20, 5, service_down}},
      {"partition-heal", {30, 5, partition_heal}},
      {"restart-catch-up", {20, 5, restart_catch_up}},
      {"roster-change", {20, 5, roster_change}},
      {"forged-injection", {20, 5, forged_injection}},
      {"clock-skew", {20, 5, clock_skew}},
      {"epoch-boundary", {40, 5, [](Builder& b) { epoch_boundary(b, BlockPort::all); }}},
      {"epoch-boundary-sni", {40, 5, [](Builder& b) { epoch_boundary(b, BlockPort::sni); }}},
      {"dissemination", {100, 10, dissemination}},
      {"border-partition", {30, 3, border_partition}},
      {"one-way-country", {30, 5, one_way_country}},
      {"two-censors", {40, 5, two_censors}},
      {"flapping-service", {20, 5, flapping_service}},
      {"flaky-observer", {20, 5, flaky_observer}},
      {"flapping-target", {20, 5, flapping_target}},
  };
  return kTable;
}

}  // namespace

const std::vector<std::string>& builtin_names() {
  static const std::vector<std::string> kNames = [] {
    std::vector<std::string> names;
    for (const auto& [name, entry] : table()) names.push_back(name);
    return names;
  }();
  return kNames;
}

ScenarioResult<Scenario> builtin_scenario(std::string_view name, const BuiltinOptions& options) {
  auto it = table().find(std::string(name));
  if (it == table().end()) {
    std::string known;
    for (const std::string& n : builtin_names()) known += (known.empty() ? "" : ", ") + n;
    return make_error(ScenarioError::unknown_scenario,
                      "no built-in scenario '" + std::string(name) + "' (known: " + known + ")");
  }
  Builder b;
  b.s.name = it->first;
  b.s.seed = options.seed;
  b.s.fleet.generated_nodes = options.nodes != 0 ? options.nodes : it->second.nodes;
  b.k = options.countries != 0 ? options.countries : it->second.countries;
  b.s.fleet.generated_countries = b.k;
  if (b.k < 2 || b.k > kGeneratedCountriesMax) {
    return make_error(ScenarioError::invalid, "countries must be 2.." +
                                                  std::to_string(kGeneratedCountriesMax));
  }
  if (b.s.fleet.generated_nodes < 4 * b.k || b.s.fleet.generated_nodes > kNodesMax) {
    return make_error(ScenarioError::invalid,
                      "nodes must be at least 4 per country (" + std::to_string(4 * b.k) +
                          ") and at most " + std::to_string(kNodesMax));
  }
  // The daily volume cap is sized for the fleet, as an operator must: at
  // the defaults a node's gossip grows with N (docs/CONFIG.md, "Daily volume
  // cap": the busiest node sends about 0.8 MB a day per server in the fleet, plus probes).
  b.s.params.volume_bytes_per_day_max =
      std::max<std::uint64_t>(Parameters{}.volume_bytes_per_day_max,
                              std::uint64_t{b.s.fleet.generated_nodes} * 2 * 1024 * 1024);
  it->second.build(b);
  if (options.duration_ms) b.s.duration_ms = *options.duration_ms;
  std::stable_sort(b.s.events.begin(), b.s.events.end(),
                   [](const Event& x, const Event& y) { return x.at_ms < y.at_ms; });
  return std::move(b.s);
}

}  // namespace mesh::sim

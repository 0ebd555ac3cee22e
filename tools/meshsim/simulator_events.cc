// The scenario's timeline: each event changes the network, a node's state
// or the roster, exactly at its virtual time.
#include <algorithm>

#include "gossip/link.h"
#include "gossip/wire.h"
#include "tools/meshsim/simulator_impl.h"

namespace mesh::sim {
namespace {

void shuffle(std::vector<std::uint32_t>& items, Rng& rng) {
  for (std::size_t i = items.size(); i > 1; --i) std::swap(items[i - 1], items[rng.below(i)]);
}

}  // namespace

void Run::refresh_truth() {
  for (SimNode& node : nodes_) {
    if (!node.healthy() || network_.unreachable_from_a_country(node.index)) node.last_unfine_ms = now_ms_;
    const bool cut_off = node.active && (!node.machine_up || network_.cut_off_from_a_country(node.index));
    if (!cut_off) {
      node.cut_off_since_ms = kNeverMs;
    } else if (node.cut_off_since_ms == kNeverMs) {
      node.cut_off_since_ms = now_ms_;
    }
  }
}

void Run::apply_event(const Event& event) {
  refresh_truth();
  const std::vector<bool> named = network_.resolve(event.servers);
  auto for_named = [&](auto&& fn) {
    for (SimNode& node : nodes_) {
      if (named[node.index]) fn(node);
    }
  };
  switch (event.kind) {
    case EventKind::block: network_.block(event); break;
    case EventKind::unblock: network_.unblock(event.name, named); break;
    case EventKind::stop_agent:
      for_named([&](SimNode& n) { if (n.running()) stop_agent(n); });
      break;
    case EventKind::start_agent:
      for_named([&](SimNode& n) {
        if (n.active && n.machine_up && !n.agent_running) start_agent(n, false);
      });
      break;
    case EventKind::service_down: for_named([](SimNode& n) { n.service_up = false; }); break;
    case EventKind::service_up: for_named([](SimNode& n) { n.service_up = true; }); break;
    case EventKind::listener_down: for_named([](SimNode& n) { n.listener_up = false; }); break;
    case EventKind::listener_up: for_named([](SimNode& n) { n.listener_up = true; }); break;
    case EventKind::node_down:
      for_named([&](SimNode& n) {
        n.machine_up = false;
        if (n.agent_running) stop_agent(n);
      });
      break;
    case EventKind::node_up:
      for_named([&](SimNode& n) {
        n.machine_up = true;
        if (n.active && !n.agent_running) start_agent(n, false);
      });
      break;
    case EventKind::unreliable_on:
      for_named([&](SimNode& n) { network_.set_unreliable(n.index, broken_half(n.index)); });
      break;
    case EventKind::unreliable_off:
      for_named([&](SimNode& n) { network_.clear_unreliable(n.index); });
      break;
    case EventKind::clock_skew:
      for_named([&](SimNode& n) {
        if (n.agent) n.agent->on_clock_jump(event.skew_ms - n.skew_ms);
        n.skew_ms = event.skew_ms;
      });
      break;
    case EventKind::partition: network_.partition(event.groups); break;
    case EventKind::heal: network_.heal(); break;
    case EventKind::set_link: network_.set_link(event.from, event.to, event.link); break;
    case EventKind::roster_add:
    case EventKind::roster_remove: roster_change(event); break;
    case EventKind::inject_forged: inject_forged(event); break;
  }
  refresh_truth();
}

// Half of the observer's neighbours, drawn from the seed: half (rounded up)
// of the targets it probes now, and half of everyone else, so that it sees
// about half of its targets fail whatever the witness plan.
std::vector<bool> Run::broken_half(std::uint32_t observer) {
  std::vector<bool> broken(nodes_.size(), false);
  std::vector<bool> is_target(nodes_.size(), false);
  std::vector<std::uint32_t> targets;
  std::vector<std::uint32_t> others;
  const SimNode& node = nodes_[observer];
  if (node.running() && node.agent->roster() != nullptr) {
    const auto& world = world_indices(*node.agent->roster());
    for (std::uint32_t t : node.agent->probe_targets(node.clock(now_ms_))) is_target[world[t]] = true;
  }
  for (std::uint32_t i = 0; i < nodes_.size(); ++i) {
    if (i == observer) continue;
    (is_target[i] ? targets : others).push_back(i);
  }
  shuffle(targets, rng_);
  shuffle(others, rng_);
  for (std::size_t k = 0; k < (targets.size() + 1) / 2; ++k) broken[targets[k]] = true;
  for (std::size_t k = 0; k < (others.size() + 1) / 2; ++k) broken[others[k]] = true;
  return broken;
}

void Run::roster_change(const Event& event) {
  const Roster& current = rosters_.rbegin()->second;
  std::vector<std::uint32_t> members = world_indices(current);
  const std::vector<bool> removed = network_.resolve(event.servers);
  std::vector<std::uint32_t> added;
  if (event.kind == EventKind::roster_add) {
    for (const ServerSpec& spec : event.add) added.push_back(world_.index_of.at(spec.id));
  } else {
    std::erase_if(members, [&](std::uint32_t i) { return removed[i]; });
  }
  members.insert(members.end(), added.begin(), added.end());
  if (members.empty()) {
    ++network_drops_["roster_change_refused"];
    return;
  }
  const std::uint64_t version = current.version + 1;
  Roster roster = make_roster(world_, members, params_, version);
  if (!validate_roster(roster).ok()) {
    ++network_drops_["roster_change_refused"];
    return;
  }
  rosters_[version] = roster;
  roster_records_[version] = sign_roster(world_, roster, now_ms_);
  rosters_published_.emplace_back(now_ms_, version);
  // Published at one node that stays a member (the lowest running one); gossip does the rest.
  for (std::uint32_t i : members) {
    if (nodes_[i].running()) {
      publish_record(nodes_[i], roster_records_[version], true);
      break;
    }
  }
  for (std::uint32_t i : added) {
    nodes_[i].active = true;
    nodes_[i].machine_up = true;
    start_agent(nodes_[i], true);
  }
  if (event.kind == EventKind::roster_remove) {
    for (SimNode& node : nodes_) {
      if (!removed[node.index] || !node.active) continue;
      node.active = false;
      node.machine_up = false;
      if (node.agent_running) stop_agent(node);
    }
  }
}

// A non-member (the intruder key, in no roster) attacks every node named:
//  1. a frame it seals itself, carrying a forged record: no member opens it;
//  2. records offered to the node's acceptance path as if a member relayed
//     them (GossipCore::publish runs the same path as a record from a frame):
//     a report in a member's name signed by the intruder, a report from a
//     non-member origin, a tampered copy of a held record, a forged roster;
//  3. the next `tamper_frames` frames in flight get one ciphertext bit flipped.
// Every one must be refused and counted; forged_accepted counts failures.
void Run::inject_forged(const Event& event) {
  std::vector<bool> named = event.servers.empty() ? std::vector<bool>(nodes_.size(), true)
                                                  : network_.resolve(event.servers);
  const SecretKey& intruder = world_.intruder_key.secret_key;
  gossip::LinkCrypto link(intruder, static_cast<std::uint64_t>(now_ms_));
  for (SimNode& node : nodes_) {
    if (!named[node.index] || !node.running() || node.core().roster() == nullptr) continue;
    const Roster& roster = *node.core().roster();
    const UnixMs now = node.clock(now_ms_);
    const std::uint32_t self = node.core().self_index().value_or(0);
    const std::uint32_t victim = (self + 1) % static_cast<std::uint32_t>(roster.servers.size());
    const ServerId& victim_id = roster.servers[victim].id;
    Report empty;
    empty.view.roster_version = roster.version;
    Bytes payload = encode_report_payload(empty, now);
    const std::uint64_t seq = node.core().held_seq(RecordKind::report, victim_id).value_or(0) + 1000;
    Bytes forged = encode_signed_record(RecordKind::report, victim_id, seq, now, payload, intruder);

    gossip::FrameContent content;
    content.roster_version = roster.version;
    content.bodies.push_back(gossip::Body{false, forged});
    auto frame = link.seal(node.key.public_key, gossip::encode_frame_content(content));
    if (frame.ok()) inject_frame(node.index, std::move(frame.value()));

    std::vector<Bytes> records;
    records.push_back(forged);
    records.push_back(encode_signed_record(RecordKind::report, "intruder-1", 1, now, payload, intruder));
    if (auto held = node.core().report_of(victim)) {
      Bytes tampered = held->envelope->raw;
      // Lower one signature byte: same seq, smaller bytes, so it wins the
      // tie-break and reaches the signature check.
      for (std::size_t i = tampered.size(); i-- > tampered.size() - kSignatureBytes;) {
        if (tampered[i] > 0) {
          --tampered[i];
          break;
        }
      }
      records.push_back(std::move(tampered));
    }
    Roster fake = roster;
    fake.version = roster.version + 1;
    records.push_back(encode_signed_record(RecordKind::roster, kOperatorOrigin, fake.version, now,
                                           encode_roster_payload(fake), intruder));
    for (Bytes& raw : records) {
      auto accepted = node.agent->offer_record(raw, now);
      if (accepted.ok()) {
        ++network_drops_["forged_accepted"];
        apply_effects(node, std::move(accepted.value()));
      } else {
        ++network_drops_[std::string("forged_refused_") + to_string(accepted.code())];
      }
    }
  }
  tamper_pending_ += event.tamper_frames;
}

}  // namespace mesh::sim

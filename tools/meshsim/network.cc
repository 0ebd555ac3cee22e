#include "tools/meshsim/network.h"

#include <algorithm>

#include "common/check.h"

namespace mesh::sim {

Network::Network(const World& world, const Scenario& scenario)
    : world_(world), size_(static_cast<std::uint32_t>(world.servers.size())) {
  MESH_CHECK(scenario.link_overrides.size() < kLinkOverridesMax, "too many link overrides");
  links_.push_back(scenario.link_defaults);
  link_class_.assign(std::size_t{size_} * size_, 0);
  blocked_.assign(std::size_t{size_} * size_, 0);
  unreachable_.assign(size_, false);
  cut_off_.assign(size_, false);
  for (const LinkOverride& link_override : scenario.link_overrides) {
    set_link(link_override.from, link_override.to, link_override.link);
  }
}

std::vector<bool> Network::resolve(const Selector& selector) const {
  std::vector<bool> members(size_, selector.all);
  for (const ServerId& id : selector.servers) {
    auto it = world_.index_of.find(id);
    if (it != world_.index_of.end()) members[it->second] = true;
  }
  for (std::uint32_t i = 0; i < size_ && !selector.countries.empty(); ++i) {
    const std::string& country = world_.servers[i].spec.country;
    if (std::find(selector.countries.begin(), selector.countries.end(), country) !=
        selector.countries.end()) {
      members[i] = true;
    }
  }
  return members;
}

bool Network::packet_passes(std::uint32_t from, std::uint32_t to, Rng& rng) const {
  const std::uint32_t loss = link(from, to).loss_permille;
  return loss == 0 || rng.below(1000) >= loss;
}

DurationMs Network::delay(std::uint32_t from, std::uint32_t to, Rng& rng) const {
  const LinkSpec& spec = link(from, to);
  DurationMs jitter = spec.jitter_ms > 0 ? static_cast<DurationMs>(rng.below(spec.jitter_ms + 1)) : 0;
  return spec.latency_ms + jitter;
}

void Network::block(const Event& event) {
  blocks_.push_back({event.name, resolve(event.servers), resolve(event.from), event.both_directions,
                     event.connections_only, event.port});
  rebuild();
}

void Network::unblock(const std::string& name, const std::vector<bool>& servers) {
  std::erase_if(blocks_, [&](const Block& block) {
    if (!name.empty()) return block.name == name;
    for (std::uint32_t i = 0; i < size_; ++i) {
      if (servers[i] && block.targets[i]) return true;
    }
    return false;
  });
  rebuild();
}

void Network::partition(const std::vector<Selector>& groups) {
  // Unlisted servers form one more group; a server in several groups keeps the first.
  partition_group_.assign(size_, static_cast<int>(groups.size()));
  for (std::size_t g = groups.size(); g-- > 0;) {
    std::vector<bool> members = resolve(groups[g]);
    for (std::uint32_t i = 0; i < size_; ++i) {
      if (members[i]) partition_group_[i] = static_cast<int>(g);
    }
  }
  rebuild();
}

void Network::heal() {
  partition_group_.clear();
  rebuild();
}

void Network::set_unreliable(std::uint32_t observer, std::vector<bool> broken) {
  unreliable_[observer] = std::move(broken);
  rebuild();
}

void Network::clear_unreliable(std::uint32_t observer) {
  unreliable_.erase(observer);
  rebuild();
}

void Network::set_link(const Selector& from, const Selector& to, const LinkSpec& link) {
  MESH_CHECK(links_.size() < kLinkOverridesMax, "too many link classes");
  auto index = static_cast<std::uint8_t>(links_.size());
  links_.push_back(link);
  std::vector<bool> sources = resolve(from);
  std::vector<bool> destinations = resolve(to);
  for (std::uint32_t a = 0; a < size_; ++a) {
    if (!sources[a]) continue;
    for (std::uint32_t b = 0; b < size_; ++b) {
      if (destinations[b]) link_class_[a * size_ + b] = index;
    }
  }
}

void Network::rebuild() {
  std::fill(blocked_.begin(), blocked_.end(), 0);
  const std::uint8_t all = kProbeBit | kGossipBit;
  // No connection from a to b on `ports`.
  auto refuse = [&](std::uint32_t a, std::uint32_t b, std::uint8_t ports) {
    blocked_[a * size_ + b] |= ports;
  };
  // Packets from a to b dropped: neither a's connections to b (the SYN) nor
  // b's to a (the SYN-ACK) can be made.
  auto drop = [&](std::uint32_t a, std::uint32_t b, std::uint8_t ports) {
    refuse(a, b, ports);
    refuse(b, a, ports);
  };
  for (const Block& block : blocks_) {
    const std::uint8_t ports = block.port == BlockPort::probe    ? kProbeBit
                               : block.port == BlockPort::gossip ? kGossipBit
                               : block.port == BlockPort::sni    ? kSniBit
                                                                 : all;
    for (std::uint32_t a = 0; a < size_; ++a) {
      if (!block.observers[a]) continue;
      for (std::uint32_t b = 0; b < size_; ++b) {
        if (!block.targets[b] || a == b) continue;
        if (block.connections_only || block.port == BlockPort::sni) {
          // A DPI box resets the handshakes its side opens (both_directions:
          // also those opened towards it).
          refuse(a, b, ports);
          if (block.both_directions) refuse(b, a, ports);
        } else {
          drop(a, b, ports);  // also covers both_directions
        }
      }
    }
  }
  // The oracles read the blocks (and, for false verdicts, broken
  // observers), never the partition: a split fleet is not a censor.
  cut_off_ = refused_by_a_country(2, false);
  for (const auto& [observer, broken] : unreliable_) {
    for (std::uint32_t b = 0; b < size_; ++b) {
      if (broken[b]) drop(observer, b, all);
    }
  }
  unreachable_ = refused_by_a_country(1, true);
  if (!partition_group_.empty()) {
    for (std::uint32_t a = 0; a < size_; ++a) {
      for (std::uint32_t b = 0; b < size_; ++b) {
        if (partition_group_[a] != partition_group_[b]) drop(a, b, all);
      }
    }
  }
}

std::vector<bool> Network::refused_by_a_country(std::uint32_t min_others, bool sni_counts) const {
  std::map<std::string, std::vector<std::uint32_t>> by_country;
  for (std::uint32_t i = 0; i < size_; ++i) by_country[world_.servers[i].spec.country].push_back(i);
  std::vector<bool> refused_by(size_, false);
  for (std::uint32_t t = 0; t < size_; ++t) {
    for (const auto& [country, members] : by_country) {
      std::uint32_t others = 0, refused = 0;
      for (std::uint32_t s : members) {
        if (s == t) continue;
        ++others;
        refused += probe_blocked(s, t) || (sni_counts && sni_blocked(s, t));
      }
      if (others >= min_others && refused == others) {
        refused_by[t] = true;
        break;
      }
    }
  }
  return refused_by;
}

}  // namespace mesh::sim

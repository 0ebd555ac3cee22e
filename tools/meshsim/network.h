// The virtual network between simulated servers (docs/SIMULATOR.md,
// "Network"): per-link loss, latency and jitter; blocks of servers from
// countries or server sets (dropped packets one way or both, or a stateful
// firewall that refuses connections opened one way; every port, probes
// only or gossip only); partitions; observers whose own outbound traffic
// is broken to half their neighbours. Everything between two servers is a
// TCP connection, so a dropped packet either way fails a connection either
// way. Paths are kept as N x N byte matrices (link class, and which
// connections cannot be made per port), rebuilt when an event changes
// them, so a frame or probe costs two lookups.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "common/rng.h"
#include "tools/meshsim/fleet_gen.h"
#include "tools/meshsim/scenario.h"

namespace mesh::sim {

class Network {
 public:
  // REQUIRES: scenario.link_overrides.size() < kLinkOverridesMax.
  Network(const World& world, const Scenario& scenario);

  // Servers (positions in world.servers) a selector names.
  std::vector<bool> resolve(const Selector& selector) const;

  // True when a connection opened from `from` to `to` for a probe (port
  // 443) or for gossip cannot be made.
  bool probe_blocked(std::uint32_t from, std::uint32_t to) const {
    return (blocked_[from * size_ + to] & kProbeBit) != 0;
  }
  bool gossip_blocked(std::uint32_t from, std::uint32_t to) const {
    return (blocked_[from * size_ + to] & kGossipBit) != 0;
  }
  // True when a TLS handshake from `from` with `to`'s SNI is reset after
  // the ClientHello (a connection can still be made).
  bool sni_blocked(std::uint32_t from, std::uint32_t to) const {
    return (blocked_[from * size_ + to] & kSniBit) != 0;
  }
  const LinkSpec& link(std::uint32_t from, std::uint32_t to) const {
    return links_[link_class_[from * size_ + to]];
  }
  // One packet from -> to over a connection that can be made: false when
  // lost. Draws from `rng` only when the link has loss.
  bool packet_passes(std::uint32_t from, std::uint32_t to, Rng& rng) const;
  // Delay of one packet: latency plus jitter uniform in [0, jitter].
  DurationMs delay(std::uint32_t from, std::uint32_t to, Rng& rng) const;

  // The oracle's truth (docs/SIMULATOR.md, "False verdicts"): true when, in
  // the model, some country's servers all fail to open a probe connection to
  // `server` (it is unreachable from that country). Machines that are off
  // are the simulator's business, not the network's.
  // A partition is never a block: users reach both sides; only the fleet's
  // own links are cut (docs/SIMULATOR.md, "False verdicts").
  bool unreachable_from_a_country(std::uint32_t server) const { return unreachable_[server]; }
  // The missed-verdict oracle: true when blocks alone leave a country with
  // at least two other servers (enough witnesses to make a verdict) all
  // unable to open a probe connection to `server`. An SNI block, which lets
  // the connection through, an observer's own broken outbound and a
  // partition do not count.
  bool cut_off_from_a_country(std::uint32_t server) const { return cut_off_[server]; }

  void block(const Event& event);
  // Lifts the block named `name`; an empty name lifts every block whose
  // targets include any of `servers`.
  void unblock(const std::string& name, const std::vector<bool>& servers);
  void partition(const std::vector<Selector>& groups);
  void heal();
  // `broken`: the neighbours `observer` can no longer send to.
  void set_unreliable(std::uint32_t observer, std::vector<bool> broken);
  void clear_unreliable(std::uint32_t observer);
  void set_link(const Selector& from, const Selector& to, const LinkSpec& link);

  std::size_t blocks_active() const { return blocks_.size(); }

 private:
  static constexpr std::uint8_t kProbeBit = 1;
  static constexpr std::uint8_t kGossipBit = 2;
  static constexpr std::uint8_t kSniBit = 4;
  struct Block {
    std::string name;
    std::vector<bool> targets;
    std::vector<bool> observers;
    bool both_directions = false;
    bool connections_only = false;
    BlockPort port = BlockPort::all;
  };
  void rebuild();
  // Per server: some country's other servers (at least `min_others` of
  // them) all fail to open a probe connection to it (`sni_counts`: or have
  // their TLS handshake with its SNI reset).
  std::vector<bool> refused_by_a_country(std::uint32_t min_others, bool sni_counts) const;

  const World& world_;
  std::uint32_t size_ = 0;
  std::vector<LinkSpec> links_;              // class 0: the defaults
  std::vector<std::uint8_t> link_class_;     // size_ x size_
  std::vector<std::uint8_t> blocked_;        // size_ x size_: kProbeBit | kGossipBit
  std::vector<bool> unreachable_;
  std::vector<bool> cut_off_;
  std::vector<Block> blocks_;
  std::vector<int> partition_group_;         // empty: no partition
  std::map<std::uint32_t, std::vector<bool>> unreliable_;
};

}  // namespace mesh::sim

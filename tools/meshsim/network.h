// The virtual network between simulated servers (docs/SIMULATOR.md,
// "Network"): per-link loss, latency and jitter; blocks of servers from
// countries or server sets, one direction or both; partitions; observers
// whose own outbound traffic is broken to half their neighbours. Paths are
// kept as two N x N byte matrices (link class, blocked), rebuilt when an
// event changes them, so a frame or probe costs two lookups.
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

  // True when packets from `from` to `to` are dropped by a block, the
  // partition or `from`'s broken outbound.
  bool blocked(std::uint32_t from, std::uint32_t to) const { return blocked_[from * size_ + to]; }
  const LinkSpec& link(std::uint32_t from, std::uint32_t to) const {
    return links_[link_class_[from * size_ + to]];
  }
  // One packet from -> to: false when blocked or lost. Draws from `rng` only
  // when the link has loss.
  bool packet_passes(std::uint32_t from, std::uint32_t to, Rng& rng) const;
  // Delay of one packet: latency plus jitter uniform in [0, jitter].
  DurationMs delay(std::uint32_t from, std::uint32_t to, Rng& rng) const;

  // True when the network itself keeps `server` from some of its neighbours:
  // it is a block target (or a block observer when both directions), on a
  // side of a partition, or its own outbound is broken. Used by the
  // false-verdict rule (docs/SIMULATOR.md).
  bool impaired(std::uint32_t server) const { return impaired_[server]; }

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
  struct Block {
    std::string name;
    std::vector<bool> targets;
    std::vector<bool> observers;
    bool both_directions = false;
  };
  void rebuild();

  const World& world_;
  std::uint32_t size_ = 0;
  std::vector<LinkSpec> links_;              // class 0: the defaults
  std::vector<std::uint8_t> link_class_;     // size_ x size_
  std::vector<std::uint8_t> blocked_;        // size_ x size_
  std::vector<bool> impaired_;
  std::vector<Block> blocks_;
  std::vector<int> partition_group_;         // empty: no partition
  std::map<std::uint32_t, std::vector<bool>> unreliable_;
};

}  // namespace mesh::sim

// Test helpers for the gossip core: deterministic keys, a signed roster of n
// servers, signed reports, and a tiny in-memory network that carries
// Effects::send frames between cores (virtual time, seeded delivery order).
#pragma once

#include <algorithm>
#include <cstdint>
#include <deque>
#include <iterator>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "gossip/core.h"
#include "common/rng.h"
#include "record/envelope.h"
#include "record/keys.h"
#include "record/report.h"
#include "record/roster.h"

namespace mesh::gossip::testing {

inline constexpr UnixMs kStartMs = 1'700'000'000'000;

inline KeyPair test_key(std::uint32_t n) {
  Bytes seed(32, 0);
  for (int i = 0; i < 4; ++i) seed[i] = static_cast<std::uint8_t>(n >> (8 * i));
  seed[31] = 0x5a;
  return key_pair_from_seed(seed);
}
inline KeyPair operator_key() { return test_key(1'000'000); }
inline KeyPair stranger_key() { return test_key(2'000'000); }
inline ServerId server_name(std::uint32_t i) { return "s" + std::to_string(i); }

// Servers s<first>.. s<first+count-1>, keys test_key(i).
inline Roster make_roster(std::uint64_t version, std::uint32_t count, std::uint32_t first = 0) {
  Roster roster;
  roster.version = version;
  for (std::uint32_t i = first; i < first + count; ++i) {
    ServerEntry server;
    server.id = server_name(i);
    server.country = "DE";
    server.probe = Endpoint{"10.0." + std::to_string(i / 250) + "." + std::to_string(i % 250 + 1), 443};
    server.sni = "vpn.example.com";
    server.gossip = Endpoint{server.probe.host, 7946};
    server.key = test_key(i).public_key;
    roster.servers.push_back(server);
  }
  return roster;
}

inline Bytes signed_roster(const Roster& roster, UnixMs timestamp_ms = kStartMs,
                           const SecretKey& key = operator_key().secret_key) {
  return encode_signed_record(RecordKind::roster, kOperatorOrigin, roster.version, timestamp_ms,
                              encode_roster_payload(roster), key);
}

// A healthy report of server `i` (keyed test_key(i) unless `key` is given).
inline Bytes signed_report(std::uint32_t i, std::uint64_t seq, UnixMs timestamp_ms,
                           std::uint64_t roster_version = 1, std::uint32_t cpu_permille = 10,
                           const SecretKey* key = nullptr) {
  Report report;
  report.metrics.cpu_permille = cpu_permille;
  report.view.roster_version = roster_version;
  const KeyPair own = test_key(i);
  return encode_signed_record(RecordKind::report, server_name(i), seq, timestamp_ms,
                              encode_report_payload(report, timestamp_ms),
                              key != nullptr ? *key : own.secret_key);
}

inline CoreConfig config_for(std::uint32_t i, std::uint64_t boot = 1) {
  CoreConfig config;
  config.self = server_name(i);
  config.node_key = test_key(i).secret_key;
  config.operator_key = operator_key().public_key;
  config.boot_counter = boot;
  return config;
}

// N cores on one virtual network. Frames sent during a step are delivered
// at the next step, in an order shuffled by the seed; `down` nodes neither
// send nor receive (their frames are lost). With `report_cuts`, a frame lost
// to `cut` is reported to its sender as a failed path (on_link_failed), as
// the daemon's transport does once TCP times out.
class Network {
 public:
  // `tune` may change each core's config (fanouts, intervals) before it starts.
  Network(std::uint32_t count, std::uint64_t seed,
          const std::function<void(CoreConfig&)>& tune = nullptr)
      : rng_(seed) {
    for (std::uint32_t i = 0; i < count; ++i) {
      CoreConfig config = config_for(i);
      if (tune) tune(config);
      cores.push_back(std::make_unique<GossipCore>(config, seed * 1000 + i));
      down.push_back(false);
    }
  }

  // Hands `raw` to every core as if loaded from storage (the test fleet's roster).
  void load_all(const Bytes& raw) {
    for (auto& core : cores) (void)core->load(std::span<const Bytes>(&raw, 1), now);
  }

  void take(std::uint32_t from, Effects effects) {
    if (down[from]) return;
    for (auto& out : effects.send) {
      if (cut && cut(from, out.to)) {  // lost on the link
        if (report_cuts) cores[from]->on_link_failed(server_name(out.to), now);
        continue;
      }
      if (late && late(from, out.to)) {
        late_.push_back({out.to, std::move(out.frame)});  // arrives one tick after the others
        continue;
      }
      in_flight_.push_back({out.to, std::move(out.frame)});
    }
  }

  // One tick: deliver what is in flight (shuffled), then tick every core.
  void step() {
    now += 1'000;
    std::vector<std::pair<std::uint32_t, Bytes>> batch(in_flight_.begin(), in_flight_.end());
    in_flight_.clear();
    std::move(late_.begin(), late_.end(), std::back_inserter(in_flight_));
    late_.clear();
    for (std::size_t i = batch.size(); i > 1; --i) std::swap(batch[i - 1], batch[rng_.below(i)]);
    for (auto& [to, frame] : batch) {
      if (to >= cores.size() || down[to]) continue;
      take(to, cores[to]->on_message(frame, now));
    }
    for (std::uint32_t i = 0; i < cores.size(); ++i) {
      if (!down[i]) take(i, cores[i]->on_tick(now));
    }
  }

  void run(int steps) {
    for (int i = 0; i < steps; ++i) step();
  }

  bool converged() const {
    for (const auto& core : cores) {
      if (core->digest() != cores[0]->digest()) return false;
    }
    return true;
  }

  std::vector<std::unique_ptr<GossipCore>> cores;
  std::vector<bool> down;
  std::function<bool(std::uint32_t from, std::uint32_t to)> cut;  // true: the frame is lost
  bool report_cuts = false;  // a frame lost to `cut` is reported to its sender (on_link_failed)
  std::function<bool(std::uint32_t from, std::uint32_t to)> late;  // true: one tick late
  UnixMs now = kStartMs;

 private:
  Rng rng_;
  std::deque<std::pair<std::uint32_t, Bytes>> in_flight_;
  std::deque<std::pair<std::uint32_t, Bytes>> late_;
};

}  // namespace mesh::gossip::testing

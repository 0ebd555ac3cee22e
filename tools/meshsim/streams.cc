#include "tools/meshsim/streams.h"

#include <algorithm>

#include "node/transport_settings.h"

namespace mesh::sim {
namespace {

// Linux's TCP, as the daemon runs on it. A segment carries up to 1448 bytes
// (MSS 1460 on a 1500-byte path, less the timestamp option). A lost data
// segment is sent again after RTO = smoothed RTT + 200 ms (TCP_RTO_MIN),
// doubling at each further loss, and given up once it has waited the
// daemon's user_timeout_ms unacknowledged (TCP_USER_TIMEOUT; tcp_retries2,
// 15 tries, would come much later). A lost SYN or SYN-ACK is sent again
// after 1 s (TCP_TIMEOUT_INIT), doubling.
constexpr std::size_t kSegmentBytes = 1'448;
constexpr std::size_t kPrefixBytes = 4;  // the frame's length prefix (PROTOCOL.md §2a)
constexpr DurationMs kRtoMinMs = 200;
constexpr DurationMs kRtoMaxMs = 120'000;
constexpr std::uint32_t kRetriesMax = 15;
constexpr DurationMs kSynRtoMs = 1'000;
constexpr std::uint32_t kConnectsMax = 5;

std::uint64_t key(std::uint32_t from, std::uint32_t to) { return std::uint64_t{from} << 32 | to; }

// The daemon's transport defaults: idle timeout, connect timeout, backoff.
const node::TransportSettings& daemon_transport() {
  static const node::TransportSettings settings;
  return settings;
}

}  // namespace

Streams::Streams(const Network& network) : network_(network) {}

DurationMs Streams::failure_delay(std::uint32_t from, std::uint32_t to, UnixMs now) const {
  const auto it = pipes_.find(key(from, to));
  const bool open = it != pipes_.end() && it->second.open &&
                    now - it->second.last_sent_ms <= daemon_transport().idle_timeout_ms;
  return open ? daemon_transport().user_timeout_ms : daemon_transport().connect_timeout_ms;
}

bool Streams::is_open(const Pipe& pipe, UnixMs now) const {
  return pipe.open && now - pipe.last_sent_ms <= daemon_transport().idle_timeout_ms;
}

bool Streams::own_open(std::uint32_t from, std::uint32_t to, UnixMs now) const {
  const auto it = pipes_.find(key(from, to));
  return it != pipes_.end() && is_open(it->second, now);
}

bool Streams::adopted_open(std::uint32_t from, std::uint32_t to, UnixMs now) const {
  const auto it = pipes_.find(key(to, from));
  return it != pipes_.end() && it->second.adopted && is_open(it->second, now);
}

bool Streams::adopt(std::uint32_t from, std::uint32_t to) {
  auto it = pipes_.find(key(from, to));
  if (it == pipes_.end() || !it->second.open || it->second.adopted) return false;
  it->second.adopted = true;
  return true;
}

std::optional<UnixMs> Streams::arrival(std::uint32_t from, std::uint32_t to, std::size_t bytes,
                                       UnixMs now, Rng& rng) {
  Pipe& pipe = pipes_[key(from, to)];
  opened_last_ = false;
  if (!is_open(pipe, now)) {
    auto ready = handshake(from, to, now, rng);
    if (!ready) {
      close(from, to);
      failed_at_ = now + daemon_transport().connect_timeout_ms;  // the first connect's deadline
      return std::nullopt;
    }
    pipe = Pipe{};
    pipe.open = true;
    pipe.ready_ms = *ready;
    opened_last_ = true;
    ready_last_ = *ready;
  }
  const UnixMs depart = std::max(now, pipe.ready_ms);
  pipe.last_sent_ms = now;
  return carry(pipe, pipe.last_arrival_ms, from, to, bytes, depart, now, rng);
}

std::optional<UnixMs> Streams::arrival_adopted(std::uint32_t from, std::uint32_t to, std::size_t bytes,
                                               UnixMs now, Rng& rng) {
  Pipe& pipe = pipes_[key(to, from)];
  pipe.last_sent_ms = now;
  ++counters_.frames_on_adopted;
  return carry(pipe, pipe.last_arrival_back_ms, from, to, bytes, now, now, rng);
}

std::optional<UnixMs> Streams::carry(Pipe& pipe, UnixMs& last_arrival, std::uint32_t from,
                                     std::uint32_t to, std::size_t bytes, UnixMs depart, UnixMs now,
                                     Rng& rng) {
  DurationMs wait = 0;
  const std::size_t segments = (bytes + kPrefixBytes + kSegmentBytes - 1) / kSegmentBytes;
  for (std::size_t s = 0; s < segments; ++s) {
    auto segment = segment_wait(from, to, rng);
    if (!segment) {
      ++counters_.connections_failed;
      pipe.open = false;
      failed_at_ = depart + daemon_transport().user_timeout_ms;
      return std::nullopt;
    }
    wait = std::max(wait, *segment);
  }
  UnixMs at = depart + network_.delay(from, to, rng) + wait;
  if (depart > now || wait > 0) ++counters_.frames_delayed;
  if (at < last_arrival) {
    at = last_arrival;
    ++counters_.frames_held_in_order;
  }
  last_arrival = at;
  return at;
}

void Streams::close(std::uint32_t from, std::uint32_t to) {
  auto it = pipes_.find(key(from, to));
  if (it != pipes_.end()) it->second.open = false;
}

void Streams::close_all(std::uint32_t server) {
  for (auto& [pair, pipe] : pipes_) {
    if (pair >> 32 == server || (pair & 0xffff'ffffu) == server) pipe.open = false;
  }
}

// The daemon's connect: SYN tries at 0, 1, 3 s... within connect_timeout,
// then the next connect after the backoff (its minimum, doubling).
std::optional<UnixMs> Streams::handshake(std::uint32_t from, std::uint32_t to, UnixMs now, Rng& rng) {
  const node::TransportSettings& daemon = daemon_transport();
  ++counters_.handshakes;
  UnixMs start = now;
  DurationMs backoff = daemon.backoff_min_ms;
  for (std::uint32_t connect = 0; connect < kConnectsMax; ++connect) {
    DurationMs offset = 0;
    DurationMs rto = kSynRtoMs;
    while (offset < daemon.connect_timeout_ms) {
      if (network_.packet_passes(from, to, rng) && network_.packet_passes(to, from, rng)) {
        return start + offset + network_.delay(from, to, rng) + network_.delay(to, from, rng);
      }
      ++counters_.syn_retries;
      offset += rto;
      rto *= 2;
    }
    start += daemon.connect_timeout_ms + backoff;
    backoff = std::min(backoff * 2, daemon.backoff_max_ms);
  }
  ++counters_.connections_failed;
  return std::nullopt;
}

std::optional<DurationMs> Streams::segment_wait(std::uint32_t from, std::uint32_t to, Rng& rng) {
  if (network_.packet_passes(from, to, rng)) return 0;
  const LinkSpec& there = network_.link(from, to);
  const LinkSpec& back = network_.link(to, from);
  DurationMs rto = there.latency_ms + back.latency_ms + (there.jitter_ms + back.jitter_ms) / 2 + kRtoMinMs;
  DurationMs wait = 0;
  for (std::uint32_t tries = 1; tries <= kRetriesMax; ++tries) {
    if (wait + rto > daemon_transport().user_timeout_ms) break;  // unacknowledged too long
    wait += rto;
    ++counters_.retransmissions;
    if (network_.packet_passes(from, to, rng)) return wait;
    rto = std::min(rto * 2, kRtoMaxMs);
  }
  return std::nullopt;
}

}  // namespace mesh::sim

// The daily wire volume cap (docs/CONFIG.md, "Daily volume cap"). Every
// byte this node puts on the wire by its own decision is charged to its
// account of the UTC day: each probe (both directions of the exchange: the
// prober causes them) and each gossip frame it sends (with TCP/IP overhead,
// node/agent/wire_cost.h). What peers send it is counted too, but charged
// to the sender's own account, so every byte on the wire is charged to
// exactly one node and no node's charged bytes pass its cap:
//   - a probe is requested only when its worst-case cost still fits, and
//     is settled at its measured cost when the outcome comes back;
//   - a frame that does not fit is not sent (counted; SYNC repairs it when
//     the account allows again, at the latest the next day).
// Before the cap is near, probes slow down so that what is left lasts the
// day: the probe interval grows so that the probes of the rest of the day,
// plus the gossip the last hour's rate projects, fit in what is left.
//
// Persisted as a reservation: the stored charged figure runs ahead of the
// true one by a chunk, so a node killed at any point restarts with an upper
// bound of what it spent, never less (it may under-spend by one chunk).
// Pure: times are arguments. Not thread-safe: the agent owns it.
#pragma once

#include <array>
#include <cstdint>
#include <optional>

#include "common/time.h"
#include "node/agent/state_codec.h"

namespace mesh::agent {

inline constexpr DurationMs kDayMs = 86'400'000;
// Reserved when a probe is requested, settled at its measured cost: a bare
// TCP probe costs ~0.3-1 KB even with SYN retries, a TLS handshake 5-12 KB.
inline constexpr std::uint64_t kProbeReserveTcpBytes = 2 * 1024;
inline constexpr std::uint64_t kProbeReserveTlsBytes = 24 * 1024;
// The gossip rate projected over the rest of the day is the mean over the
// last hour's minutes, spread over at least this many minutes.
inline constexpr std::int64_t kRateSpanMinMinutes = 10;
// The persisted reservation runs this far ahead (and at least cap / 256).
inline constexpr std::uint64_t kReservationChunkMinBytes = 64 * 1024;

struct VolumeStatus {
  std::uint64_t day = 0;
  std::uint64_t cap_bytes = 0;
  std::uint64_t charged_bytes = 0;   // probes + gossip sent today
  std::uint64_t probe_bytes = 0;
  std::uint64_t sent_bytes = 0;
  std::uint64_t received_bytes = 0;  // counted, charged to the senders
  DurationMs probe_interval_ms = 0;  // the paced interval in force
  bool tight = false;                // probes are slowed down to fit the cap
  bool exhausted = false;            // nothing more fits today
  std::uint64_t frames_refused = 0;  // frames not sent for the cap (since start)
  std::uint64_t probes_deferred = 0; // probes not started for the cap (since start)
};

class VolumeBudget {
 public:
  void set_cap(std::uint64_t cap_bytes) { cap_ = cap_bytes; }
  std::uint64_t cap() const { return cap_; }

  // Resumes the stored account if it is of `now`'s day (another day's is
  // over: the new day starts at zero).
  void restore(const VolumeRecord& stored, UnixMs now);
  // Starts a new account when `now` is on a later day than the current one.
  void roll(UnixMs now);

  // Charges `worst_bytes` for a probe about to start; false (nothing
  // charged, counted as deferred) when it does not fit under the cap.
  bool reserve_probe(std::uint64_t worst_bytes);
  // Replaces a probe's reservation by its measured cost.
  void settle_probe(std::uint64_t reserved_bytes, std::uint64_t measured_bytes, bool tls);
  // Charges a frame about to be sent; false (not charged, counted) when it
  // does not fit.
  bool charge_frame(std::uint64_t wire_bytes, UnixMs now);
  void add_received(std::uint64_t wire_bytes) { account_.received_bytes += wire_bytes; }

  // The probe interval for the rest of the day: `base` (the roster's
  // probe_interval_ms) unless the probes of `targets` targets at that pace,
  // one in `tls_period` a TLS handshake (0: none), plus the projected
  // gossip, would not fit; then longer. Updates status().
  DurationMs paced_interval(DurationMs base, std::size_t targets, std::uint32_t tls_period,
                            UnixMs now);

  // The record to persist now that the charged bytes passed the stored
  // reservation (a new reservation a chunk ahead), or nullopt.
  std::optional<VolumeRecord> reservation_due();
  // The exact account (for a clean shutdown).
  VolumeRecord exact() const { return account_; }

  VolumeStatus status() const;

 private:
  std::uint64_t chunk() const;
  std::uint64_t gossip_bytes_per_minute(UnixMs now) const;

  std::uint64_t cap_ = 0;
  VolumeRecord account_;
  std::uint64_t reserved_ = 0;  // the charged figure last persisted
  bool started_ = false;        // account_ is of a known day
  // Gossip sent per minute over the last hour, for the projection.
  std::array<std::uint64_t, 60> minute_bytes_{};
  std::array<std::int64_t, 60> minute_of_{};
  std::int64_t first_minute_ = -1;
  // Measured probe costs (moving averages), for pacing.
  std::uint64_t tcp_probe_bytes_ = 280;
  std::uint64_t tls_probe_bytes_ = 2'400;
  DurationMs interval_ms_ = 0;
  bool tight_ = false;
  std::uint64_t frames_refused_ = 0;
  std::uint64_t probes_deferred_ = 0;
};

}  // namespace mesh::agent

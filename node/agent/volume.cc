#include "node/agent/volume.h"

#include <algorithm>

namespace mesh::agent {
namespace {

std::uint64_t day_of(UnixMs now) { return now <= 0 ? 0 : static_cast<std::uint64_t>(now / kDayMs); }

// Moving average with weight 1/8 for the new sample.
std::uint64_t blend(std::uint64_t average, std::uint64_t sample) {
  return (average * 7 + sample) / 8;
}

}  // namespace

void VolumeBudget::restore(const VolumeRecord& stored, UnixMs now) {
  if (stored.day != day_of(now)) return;
  account_ = stored;
  reserved_ = stored.charged_bytes;
  started_ = true;
}

void VolumeBudget::roll(UnixMs now) {
  // A clock stepped back to an earlier day keeps today's account: the
  // conservative reading.
  const std::uint64_t day = day_of(now);
  if (started_ && day <= account_.day) return;
  account_ = VolumeRecord{};
  account_.day = day;
  reserved_ = 0;
  started_ = true;
}

bool VolumeBudget::reserve_probe(std::uint64_t worst_bytes) {
  if (account_.charged_bytes + worst_bytes > cap_) {
    ++probes_deferred_;
    return false;
  }
  account_.charged_bytes += worst_bytes;
  account_.probe_bytes += worst_bytes;
  return true;
}

void VolumeBudget::settle_probe(std::uint64_t reserved_bytes, std::uint64_t measured_bytes,
                                bool tls) {
  // A reservation made on an earlier day was reset with that day's account.
  const std::uint64_t held = std::min(reserved_bytes, account_.probe_bytes);
  account_.charged_bytes = account_.charged_bytes - held + measured_bytes;
  account_.probe_bytes = account_.probe_bytes - held + measured_bytes;
  std::uint64_t& average = tls ? tls_probe_bytes_ : tcp_probe_bytes_;
  if (measured_bytes > 0) average = blend(average, measured_bytes);
}

bool VolumeBudget::charge_frame(std::uint64_t wire_bytes, UnixMs now) {
  if (account_.charged_bytes + wire_bytes > cap_) {
    ++frames_refused_;
    return false;
  }
  account_.charged_bytes += wire_bytes;
  account_.sent_bytes += wire_bytes;
  const std::int64_t minute = now / 60'000;
  const std::size_t slot = static_cast<std::size_t>(((minute % 60) + 60) % 60);
  if (minute_of_[slot] != minute) {
    minute_of_[slot] = minute;
    minute_bytes_[slot] = 0;
  }
  minute_bytes_[slot] += wire_bytes;
  if (first_minute_ < 0) first_minute_ = minute;
  return true;
}

std::uint64_t VolumeBudget::gossip_bytes_per_minute(UnixMs now) const {
  if (first_minute_ < 0) return 0;
  const std::int64_t minute = now / 60'000;
  std::uint64_t total = 0;
  for (std::size_t i = 0; i < minute_bytes_.size(); ++i) {
    if (minute_of_[i] > minute - 60 && minute_of_[i] <= minute) total += minute_bytes_[i];
  }
  // At least kRateSpanMinMinutes: a start-up burst (the roster pushed to
  // every neighbour, every report new) is not a rate for the whole day.
  const std::int64_t span = std::clamp<std::int64_t>(minute - first_minute_ + 1, kRateSpanMinMinutes, 60);
  return total / static_cast<std::uint64_t>(span);
}

DurationMs VolumeBudget::paced_interval(DurationMs base, std::size_t targets,
                                        std::uint32_t tls_period, UnixMs now) {
  roll(now);
  const DurationMs remaining_ms = std::max<DurationMs>(kDayMs - now % kDayMs, 1);
  const std::uint64_t projected_gossip =
      gossip_bytes_per_minute(now) * static_cast<std::uint64_t>((remaining_ms + 59'999) / 60'000);
  const std::uint64_t spent = account_.charged_bytes + projected_gossip;
  const std::uint64_t left = spent < cap_ ? cap_ - spent : 0;
  // One round: every target once, one probe in tls_period at the TLS cost.
  const std::uint64_t per_probe =
      tls_period == 0 ? tcp_probe_bytes_
                      : (tcp_probe_bytes_ * (tls_period - 1) + tls_probe_bytes_) / tls_period;
  const std::uint64_t round = std::max<std::uint64_t>(per_probe * targets, 1);
  const std::uint64_t rounds = left / round;
  DurationMs interval = base;
  if (targets > 0 && rounds == 0) {
    interval = remaining_ms + 1;  // nothing fits before midnight UTC
  } else if (targets > 0) {
    interval = std::max<DurationMs>(base, remaining_ms / static_cast<DurationMs>(rounds));
  }
  interval_ms_ = interval;
  tight_ = interval > base;
  return interval;
}

std::uint64_t VolumeBudget::chunk() const {
  return std::max<std::uint64_t>(kReservationChunkMinBytes, cap_ / 256);
}

std::optional<VolumeRecord> VolumeBudget::reservation_due() {
  if (account_.charged_bytes <= reserved_ && reserved_ != 0) return std::nullopt;
  reserved_ = account_.charged_bytes + chunk();
  VolumeRecord record = account_;
  record.charged_bytes = reserved_;
  return record;
}

VolumeStatus VolumeBudget::status() const {
  VolumeStatus status;
  status.day = account_.day;
  status.cap_bytes = cap_;
  status.charged_bytes = account_.charged_bytes;
  status.probe_bytes = account_.probe_bytes;
  status.sent_bytes = account_.sent_bytes;
  status.received_bytes = account_.received_bytes;
  status.probe_interval_ms = interval_ms_;
  status.tight = tight_;
  status.exhausted = account_.charged_bytes + kProbeReserveTcpBytes > cap_;
  status.frames_refused = frames_refused_;
  status.probes_deferred = probes_deferred_;
  return status;
}

}  // namespace mesh::agent

#include "node/agent/state_codec.h"

#include "common/server_id.h"

namespace mesh::agent {
namespace {

constexpr std::uint8_t kStreakFormat = 1;
constexpr std::size_t kStreakBytes = 1 + 4 + 4 + 8 + 8 + 1 + 8;
constexpr std::uint8_t kVolumeFormat = 1;
constexpr std::size_t kVolumeBytes = 1 + 5 * 8;

void put_be(Bytes& out, std::uint64_t value, int width) {
  for (int shift = 8 * (width - 1); shift >= 0; shift -= 8) {
    out.push_back(static_cast<std::uint8_t>(value >> shift));
  }
}

std::uint64_t get_be(ByteView bytes, std::size_t& at, int width) {
  std::uint64_t value = 0;
  for (int i = 0; i < width; ++i) value = (value << 8) | bytes[at++];
  return value;
}

}  // namespace

std::string streak_key(std::string_view target_id) {
  std::string key(kStreakKeyPrefix);
  key.append(target_id);
  return key;
}

std::optional<std::string_view> streak_target(std::string_view key) {
  if (!key.starts_with(kStreakKeyPrefix)) return std::nullopt;
  return key.substr(kStreakKeyPrefix.size());
}

Bytes encode_streak(const verdict::TargetStreak& streak) {
  Bytes out;
  out.reserve(kStreakBytes);
  out.push_back(kStreakFormat);
  put_be(out, streak.fail_streak, 4);
  put_be(out, streak.ok_streak, 4);
  put_be(out, static_cast<std::uint64_t>(streak.last_probe_ms), 8);
  put_be(out, static_cast<std::uint64_t>(streak.last_ok_ms), 8);
  out.push_back(static_cast<std::uint8_t>(streak.reason));
  put_be(out, streak.probes, 8);
  return out;
}

std::optional<verdict::TargetStreak> decode_streak(std::string_view target_id, ByteView bytes) {
  if (bytes.size() != kStreakBytes || bytes[0] != kStreakFormat || !is_valid_server_id(target_id)) {
    return std::nullopt;
  }
  std::size_t at = 1;
  verdict::TargetStreak streak;
  streak.id = ServerId(target_id);
  streak.fail_streak = static_cast<std::uint32_t>(get_be(bytes, at, 4));
  streak.ok_streak = static_cast<std::uint32_t>(get_be(bytes, at, 4));
  streak.last_probe_ms = static_cast<UnixMs>(get_be(bytes, at, 8));
  streak.last_ok_ms = static_cast<UnixMs>(get_be(bytes, at, 8));
  const std::uint8_t reason = bytes[at++];
  if (reason > kProbeFailureMax) return std::nullopt;
  streak.reason = static_cast<ProbeFailure>(reason);
  streak.probes = get_be(bytes, at, 8);
  return streak;
}

Bytes encode_volume(const VolumeRecord& record) {
  Bytes out;
  out.reserve(kVolumeBytes);
  out.push_back(kVolumeFormat);
  for (std::uint64_t value : {record.day, record.charged_bytes, record.probe_bytes,
                              record.sent_bytes, record.received_bytes}) {
    put_be(out, value, 8);
  }
  return out;
}

std::optional<VolumeRecord> decode_volume(ByteView bytes) {
  if (bytes.size() != kVolumeBytes || bytes[0] != kVolumeFormat) return std::nullopt;
  std::size_t at = 1;
  VolumeRecord record;
  record.day = get_be(bytes, at, 8);
  record.charged_bytes = get_be(bytes, at, 8);
  record.probe_bytes = get_be(bytes, at, 8);
  record.sent_bytes = get_be(bytes, at, 8);
  record.received_bytes = get_be(bytes, at, 8);
  if (record.charged_bytes < record.probe_bytes + record.sent_bytes) return std::nullopt;
  return record;
}

}  // namespace mesh::agent

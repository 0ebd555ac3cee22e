#include "node/agent/state_codec.h"

#include "common/server_id.h"

namespace mesh::agent {
namespace {

// Format 1 (before a failing streak remembered when it began and whether it
// was answered) is still read: a failing streak of it starts its failures
// at its last probe, unanswered.
constexpr std::uint8_t kStreakFormatV1 = 1;
constexpr std::size_t kStreakBytesV1 = 1 + 4 + 4 + 8 + 8 + 1 + 8;
constexpr std::uint8_t kStreakFormat = 2;
constexpr std::size_t kStreakBytes = kStreakBytesV1 + 8 + 1;
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
  put_be(out, static_cast<std::uint64_t>(streak.failing_since_ms), 8);
  // 0: no answer, 1: answered (as format 2 always wrote it), 2: one answer of two.
  out.push_back(streak.answered ? 1 : streak.answers > 0 ? 2 : 0);
  return out;
}

std::optional<verdict::TargetStreak> decode_streak(std::string_view target_id, ByteView bytes) {
  const bool v1 = bytes.size() == kStreakBytesV1 && !bytes.empty() && bytes[0] == kStreakFormatV1;
  const bool v2 = bytes.size() == kStreakBytes && !bytes.empty() && bytes[0] == kStreakFormat;
  if (!(v1 || v2) || !is_valid_server_id(target_id)) return std::nullopt;
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
  if (v1) {
    if (streak.fail_streak > 0) streak.failing_since_ms = streak.last_probe_ms;
    return streak;
  }
  streak.failing_since_ms = static_cast<UnixMs>(get_be(bytes, at, 8));
  const std::uint8_t answered = bytes[at++];
  if (answered > 2) return std::nullopt;
  streak.answered = answered == 1;
  streak.answers = answered == 1 ? verdict::kAnswersToConfirm : answered == 2 ? 1 : 0;
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

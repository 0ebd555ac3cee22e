// The agent's own state values in storage (docs/STORAGE.md, "Agent state"):
// one probe streak per target and the day's volume account. Fixed binary
// layouts, big-endian, each starting with a format byte; decoding is strict
// (exact length, known format, valid fields) and never trusts the bytes.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "common/bytes.h"
#include "verdict/probe_ledger.h"

namespace mesh::agent {

// State keys. Streaks: kStreakKeyPrefix + the target's server id.
inline constexpr std::string_view kStreakKeyPrefix = "probe/";
inline constexpr std::string_view kVolumeKey = "agent/volume";
inline constexpr std::string_view kVerdictsKey = "agent/verdicts";
inline constexpr std::string_view kFlapsKey = "agent/flaps";  // FlapHistory::encode

std::string streak_key(std::string_view target_id);
// The target id of a streak key, or nullopt for another key.
std::optional<std::string_view> streak_target(std::string_view key);

// Streak: format 2 (1 B) || fail_streak (4) || ok_streak (4) ||
// last_probe_ms (8, signed) || last_ok_ms (8, signed) || reason (1) ||
// probes (8) || failing_since_ms (8, signed) || answers (1: 0 none, 1 answered,
// 2 one answer of verdict::kAnswersToConfirm) = 43
// bytes; format 1 is the first 34 bytes of it (still read). The id is the key's.
Bytes encode_streak(const verdict::TargetStreak& streak);
// nullopt when the bytes are not exactly that layout; the streak's own
// rules are checked by ProbeLedger::restore.
std::optional<verdict::TargetStreak> decode_streak(std::string_view target_id, ByteView bytes);

// The volume account of one UTC day (node/agent/volume.h).
struct VolumeRecord {
  std::uint64_t day = 0;             // days since 1970-01-01 UTC
  std::uint64_t charged_bytes = 0;   // probes + gossip sent, as reserved (an upper bound)
  std::uint64_t probe_bytes = 0;
  std::uint64_t sent_bytes = 0;
  std::uint64_t received_bytes = 0;
  bool operator==(const VolumeRecord&) const = default;
};

// Volume: format 1 (1 B) || day || charged || probe || sent || received,
// 8 B each = 41 bytes.
Bytes encode_volume(const VolumeRecord& record);
std::optional<VolumeRecord> decode_volume(ByteView bytes);

}  // namespace mesh::agent

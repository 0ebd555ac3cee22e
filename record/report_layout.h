// Internal to record/: the fixed positions and bounds of the report payload
// layout (docs/PROTOCOL.md, "Report payload"), shared by encoder and decoder.
#pragma once

#include <cstddef>
#include <cstdint>

#include "record/roster.h"

namespace mesh {

inline constexpr std::size_t kReportFields = 3;     // [self_check, metrics, view]
// ... + flags: written only when a flag is set.
inline constexpr std::size_t kReportFieldsFlagged = 4;
inline constexpr std::uint64_t kReportFlagWarming = 1;      // Report::warming
inline constexpr std::uint64_t kReportFlagAlertSender = 2;  // Report::alert_sender
inline constexpr std::uint64_t kReportFlagsKnown = kReportFlagWarming | kReportFlagAlertSender;
inline constexpr std::size_t kSelfCheckFields = 3;  // [listener_ok, service_ok, reason]
// ... + flap changes, hold_ms: written only when the node flapped (Flapping::changes > 0).
inline constexpr std::size_t kSelfCheckFieldsFlapping = 5;
inline constexpr std::size_t kMetricsFields = 10;   // Metrics, declaration order
inline constexpr std::size_t kViewFields = 5;       // [version, bitmap, streak, age, failures]
// ... + recovered bitmap: written only when a target is flagged recovered.
inline constexpr std::size_t kViewFieldsRecovered = 6;
inline constexpr std::size_t kFailureFields = 5;    // [target, streak, probe age, ok age, reason]
// ... + unanswered_since_age_ms: written only on an unanswered failure.
inline constexpr std::size_t kFailureFieldsUnanswered = 6;
inline constexpr std::size_t kReportDepthMax = 4;   // payload > view > failures > failure
inline constexpr std::uint32_t kCpuPermilleMax = 1000;
// Target indices are roster positions, so never beyond the largest roster.
inline constexpr std::uint32_t kReportTargetsMax = static_cast<std::uint32_t>(kRosterServersMax);
inline constexpr std::size_t kOkBitmapBytesMax = (kRosterServersMax + 7) / 8;

}  // namespace mesh

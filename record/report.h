// A node's report: self-check, metrics and probe view. It travels as the
// payload of a `report` record signed by the node (docs/PROTOCOL.md,
// "Report payload"). The probe view names targets by their index in the
// roster whose version it carries.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "common/bytes.h"
#include "common/result.h"
#include "common/time.h"

namespace mesh {

struct Roster;

inline constexpr std::size_t kSelfCheckReasonBytesMax = 120;
inline constexpr std::uint32_t kStreakMax = 1'000'000;

// Why the last probe of a target failed. Wire values are append-only.
enum class ProbeFailure : std::uint8_t {
  none = 0,             // the last probe succeeded
  tcp_timeout = 1,      // no SYN-ACK before the deadline
  tcp_refused = 2,      // RST in answer to SYN
  tcp_reset = 3,        // connection reset after it was established
  tcp_unreachable = 4,  // ICMP unreachable / no route
  tls_timeout = 5,      // TCP up, no complete TLS handshake before the deadline
  tls_reset = 6,        // connection reset during the TLS handshake
  tls_alert = 7,        // the server answered with a TLS alert
  tls_bad_peer = 8,     // handshake completed with something that is not a TLS server
};
inline constexpr std::uint8_t kProbeFailureMax = 8;
const char* to_string(ProbeFailure failure);

struct SelfCheck {
  bool listener_ok = true;  // the traffic listener (443) accepts connections
  bool service_ok = true;   // the VPN service is running
  std::string reason;       // short, set when either is false
  bool operator==(const SelfCheck&) const = default;
};

struct Metrics {
  std::uint32_t cpu_permille = 0;           // 0..1000 per core summed / cores
  std::uint64_t memory_used_kib = 0;
  std::uint64_t memory_total_kib = 0;
  std::uint64_t disk_used_mib = 0;
  std::uint64_t disk_total_mib = 0;
  std::uint64_t net_rx_bytes_per_s = 0;
  std::uint64_t net_tx_bytes_per_s = 0;
  std::uint32_t load_average_milli = 0;     // 1-minute load average × 1000
  std::uint64_t uptime_s = 0;
  std::uint32_t listener_connections = 0;   // established on the listener port
  bool operator==(const Metrics&) const = default;
};

// What an observer knows of one target. fail_streak > 0 means the last probe
// failed (then ok_streak == 0 and reason != none); fail_streak == 0 means it
// succeeded (ok_streak >= 1, reason == none).
struct ProbeResult {
  std::uint32_t target = 0;       // index in the roster of ProbeView::roster_version
  std::uint32_t fail_streak = 0;  // consecutive failures up to the last probe
  std::uint32_t ok_streak = 0;    // consecutive successes up to the last probe
  UnixMs last_probe_ms = 0;
  UnixMs last_ok_ms = 0;          // 0 = never succeeded
  ProbeFailure reason = ProbeFailure::none;
  // Only on a result that gets through (fail_streak == 0): the target was
  // failing before this ok streak, and the streak is still young (at most
  // the roster's fail_streak probes). The verdict engine reads it for the
  // far side of a border that has just lifted (docs/VERDICTS.md, rule 6).
  bool recovered = false;
  // Only on a failing result (fail_streak > 0): when the streak's first
  // failure was probed, while no probe has failed since the observer heard
  // from the target after that (the failure is *unanswered*: the target may
  // be silent, powered off or across a split, or only just heard again);
  // 0 once a probe failed after the target spoke (*answered*: it is alive
  // and cannot be reached), and on results that get through.
  // docs/PROTOCOL.md, "Report payload"; docs/VERDICTS.md, rule 5.
  UnixMs unanswered_since_ms = 0;
  bool operator==(const ProbeResult&) const = default;
};

// The node's own flapping (docs/VERDICTS.md, "Flapping"): how often its
// self-check went from healthy to failing in the last hour, and for how
// long after the report's timestamp it asks to stay out of rotation
// although it looks healthy (a hold-down that grows with its changes, as
// BGP damps a flapping route). Both 0 when it did not flap.
struct Flapping {
  std::uint32_t changes = 0;  // healthy -> failing in the hour before the report
  DurationMs hold_ms = 0;     // held out of rotation until timestamp + hold_ms
  bool operator==(const Flapping&) const = default;
};
inline constexpr std::uint32_t kFlapChangesMax = 1'000'000;
inline constexpr DurationMs kFlapHoldMsMax = 86'400'000;  // a day

struct ProbeView {
  std::uint64_t roster_version = 0;
  std::vector<ProbeResult> results;  // sorted by target, no repeats
  bool operator==(const ProbeView&) const = default;
};

struct Report {
  SelfCheck self_check;
  Metrics metrics;
  ProbeView view;
  Flapping flapping;  // on the wire inside self_check (docs/PROTOCOL.md, "Report payload")
  // The node started lately and may not hold the fleet's latest reports
  // yet (docs/PROTOCOL.md, "Report payload", `flags`): what it judges may
  // be stale, so no node names it the panel's writer or the alerts' sender
  // while another can be (docs/PANELS.md, "One writer").
  bool warming = false;
  // The node delivers the fleet's alerts now (docs/PANELS.md, "Takeover"):
  // the others drop the transitions it has dealt with only on its word,
  // never on their own guess of who the sender is.
  bool alert_sender = false;
  bool operator==(const Report&) const = default;
};

enum class ReportError {
  malformed,        // not the documented msgpack layout
  oversize,         // a field over its limit
  unknown_target,   // a target index outside the roster
  self_target,      // the view names its own origin
  repeated_target,  // a target twice
  impossible_value, // streaks beyond kStreakMax or inconsistent, times ahead of the record
};

// The enumerator's name ("self_target"), for logs and tools.
const char* to_string(ReportError error);

// The compact encoding: targets whose last probe succeeded go into a bitmap
// with one summary (the smallest ok_streak, the oldest last probe); failing
// targets are listed in full. Decoding gives each bitmap target the summary
// values, so decode(encode(r)) equals r only up to that summary.
Bytes encode_report_payload(const Report& report, UnixMs record_timestamp_ms);

// Strict decode. When view.roster_version == roster.version the targets are
// checked against `roster` (`origin_index` is the reporter's own index);
// for any other version only the structure is checked, and the verdict
// engine treats that view as unusable (no votes) until a report on the
// current roster arrives (docs/VERDICTS.md, "Roster changes").
Result<Report, ReportError> decode_report_payload(ByteView payload, const Roster& roster,
                                                  std::uint32_t origin_index,
                                                  UnixMs record_timestamp_ms);

// The verdict of decode_report_payload without the Report, for callers that
// would throw the decoded report away (gossip with hold_decoded_reports off).
// Contract: exactly decode_report_payload's checks, in the same order, with
// the same precedence (a structural fault anywhere wins over a broken rule
// before it), the same ReportError code and the same message; it is ok()
// exactly when decode_report_payload is. It allocates nothing on the heap
// when it accepts (only a refusal builds its message). Both share one
// decoder (report_decode.cc); tests/record/validate_test.cc holds them equal.
Status<ReportError> validate_report_payload(ByteView payload, const Roster& roster,
                                            std::uint32_t origin_index,
                                            UnixMs record_timestamp_ms);

// A report's failing targets alone (its view.failures) and the view's
// roster version, for a node that wants only what a compatriot witness
// fails (docs/PROTOCOL.md, "Probes": a compatriot's TLS failure). The
// rest of the payload is skipped within the layout's limits, not checked:
// meant for payloads the gossip layer already accepted. A payload that is
// not the documented layout where it is read gives the decoder's error.
struct ReportFailures {
  std::uint64_t roster_version = 0;
  std::vector<ProbeResult> failures;  // in the payload's order (by target)
};
Result<ReportFailures, ReportError> decode_report_failures(ByteView payload,
                                                           UnixMs record_timestamp_ms);

}  // namespace mesh

// Report payload encoder (docs/PROTOCOL.md, "Report payload"):
//   [self_check, metrics, view]
//   self_check = [listener_ok bool, service_ok bool, reason str <= 120 bytes]
//              | [listener_ok, service_ok, reason, flap_changes uint, hold_ms uint]
//   metrics    = [10 uints, Metrics fields in declaration order]
//   view       = [roster_version, ok_bitmap bin | gaps array, ok_min_streak, ok_oldest_age_ms, failures]
//              | [..., failures, recovered bin | gaps array]
//   failure    = [target, fail_streak, last_probe_age_ms, last_ok_age_ms | nil, reason]
//              | [target, fail_streak, last_probe_age_ms, last_ok_age_ms | nil, reason,
//                 unanswered_since_age_ms]
// Ages are record timestamp minus the time. Decoding is in report_decode.cc.
#include "record/report.h"

#include <msgpack.hpp>

#include <algorithm>
#include <bit>
#include <set>

#include "common/check.h"
#include "record/address.h"
#include "record/report_layout.h"

namespace mesh {
namespace {

using Packer = msgpack::packer<msgpack::sbuffer>;

// Keeps printable UTF-8, replaces anything else by '?', and cuts at a
// character boundary within kSelfCheckReasonBytesMax.
std::string sanitize_reason(const std::string& reason) {
  std::string out;
  std::size_t i = 0;
  while (i < reason.size()) {
    auto b = static_cast<unsigned char>(reason[i]);
    std::size_t length = b < 0x80 ? 1 : (b & 0xe0) == 0xc0 ? 2 : (b & 0xf0) == 0xe0 ? 3 : 4;
    std::string_view piece = std::string_view(reason).substr(i, length);
    bool good = piece.size() == length && is_printable_utf8(piece);
    std::string_view kept = good ? piece : std::string_view("?");
    if (out.size() + kept.size() > kSelfCheckReasonBytesMax) break;
    out.append(kept);
    i += good ? length : 1;
  }
  return out;
}

std::uint64_t age_of(UnixMs time_ms, UnixMs record_timestamp_ms) {
  MESH_CHECK(time_ms <= record_timestamp_ms, "report time ahead of the record timestamp");
  return static_cast<std::uint64_t>(record_timestamp_ms - time_ms);
}

void pack_self_check(Packer& packer, const SelfCheck& self_check, const Flapping& flapping) {
  std::string reason = sanitize_reason(self_check.reason);
  MESH_CHECK(flapping.changes <= kFlapChangesMax && flapping.hold_ms >= 0 && flapping.hold_ms <= kFlapHoldMsMax &&
                 (flapping.changes > 0 || flapping.hold_ms == 0),
             "report flapping out of range");
  packer.pack_array(flapping.changes > 0 ? kSelfCheckFieldsFlapping : kSelfCheckFields);
  self_check.listener_ok ? packer.pack_true() : packer.pack_false();
  self_check.service_ok ? packer.pack_true() : packer.pack_false();
  packer.pack_str(static_cast<std::uint32_t>(reason.size()));
  packer.pack_str_body(reason.data(), static_cast<std::uint32_t>(reason.size()));
  if (flapping.changes == 0) return;
  packer.pack_uint32(flapping.changes);
  packer.pack_uint64(static_cast<std::uint64_t>(flapping.hold_ms));
}

void pack_metrics(Packer& packer, const Metrics& m) {
  packer.pack_array(kMetricsFields);
  packer.pack_uint32(std::min<std::uint32_t>(m.cpu_permille, kCpuPermilleMax));
  for (std::uint64_t value : {m.memory_used_kib, m.memory_total_kib, m.disk_used_mib,
                              m.disk_total_mib, m.net_rx_bytes_per_s, m.net_tx_bytes_per_s}) {
    packer.pack_uint64(value);
  }
  packer.pack_uint32(m.load_average_milli);
  packer.pack_uint64(m.uptime_s);
  packer.pack_uint32(m.listener_connections);
}

void pack_failure(Packer& packer, const ProbeResult& r, UnixMs timestamp_ms) {
  MESH_CHECK(r.fail_streak <= kStreakMax, "report fail_streak over kStreakMax");
  MESH_CHECK(r.reason != ProbeFailure::none, "failing probe result without a reason");
  const bool unanswered = r.unanswered_since_ms != 0;
  MESH_CHECK(!unanswered || (r.unanswered_since_ms <= r.last_probe_ms && r.unanswered_since_ms > r.last_ok_ms),
             "report unanswered_since outside its streak");
  packer.pack_array(unanswered ? kFailureFieldsUnanswered : kFailureFields);
  packer.pack_uint32(r.target);
  packer.pack_uint32(r.fail_streak);
  packer.pack_uint64(age_of(r.last_probe_ms, timestamp_ms));
  if (r.last_ok_ms == 0) {
    packer.pack_nil();
  } else {
    MESH_CHECK(r.last_ok_ms <= r.last_probe_ms, "last_ok_ms after last_probe_ms");
    packer.pack_uint64(age_of(r.last_ok_ms, timestamp_ms));
  }
  packer.pack_uint8(static_cast<std::uint8_t>(r.reason));
  if (unanswered) packer.pack_uint64(age_of(r.unanswered_since_ms, timestamp_ms));
}

// Bytes of `value` as msgpack-c packs an unsigned integer (the shortest form).
std::size_t uint_bytes(std::uint64_t value) {
  return value <= 0x7f ? 1 : value <= 0xff ? 2 : value <= 0xffff ? 3 : value <= 0xffffffff ? 5 : 9;
}

// A set of targets (docs/PROTOCOL.md, "Report payload", "Target sets"),
// given as a trimmed bitmap: written as that bitmap (bin), or as the
// targets' gaps (an array of uints) when that is shorter. A bitmap spans
// the roster, ceil(N / 8) bytes however few targets it holds: a node's 60
// targets in a roster of 1000 take 125 bytes as a bitmap, about 62 as gaps.
void pack_target_set(Packer& packer, const Bytes& bitmap) {
  std::vector<std::uint32_t> gaps;
  std::size_t gap_bytes = 0;
  std::uint32_t previous = 0;
  for (std::size_t byte = 0; byte < bitmap.size(); ++byte) {
    for (unsigned bits = bitmap[byte]; bits != 0; bits &= bits - 1) {
      const auto target = static_cast<std::uint32_t>(byte * 8 + static_cast<unsigned>(std::countr_zero(bits)));
      gaps.push_back(gaps.empty() ? target : target - previous);
      gap_bytes += uint_bytes(gaps.back());
      previous = target;
    }
  }
  const std::size_t bin_bytes = (bitmap.size() <= 0xff ? 2 : 3) + bitmap.size();
  gap_bytes += gaps.size() <= 15 ? 1 : 3;
  if (gaps.empty() || bin_bytes <= gap_bytes) {  // a tie, and the empty set, as a bitmap
    packer.pack_bin(static_cast<std::uint32_t>(bitmap.size()));
    packer.pack_bin_body(reinterpret_cast<const char*>(bitmap.data()), static_cast<std::uint32_t>(bitmap.size()));
    return;
  }
  packer.pack_array(static_cast<std::uint32_t>(gaps.size()));
  for (const std::uint32_t gap : gaps) packer.pack_uint32(gap);
}

void pack_view(Packer& packer, const ProbeView& view, UnixMs timestamp_ms) {
  std::vector<const ProbeResult*> failures;
  Bytes bitmap;
  Bytes recovered;  // a subset of bitmap, trimmed the same way
  std::uint32_t min_streak = 0;
  UnixMs oldest_ms = timestamp_ms;
  std::set<std::uint32_t> seen;
  for (const ProbeResult& r : view.results) {
    MESH_CHECK(seen.insert(r.target).second, "probe view names a target twice");
    MESH_CHECK(r.target < kReportTargetsMax, "probe target index over kRosterServersMax");
    if (r.fail_streak > 0) {
      MESH_CHECK(!r.recovered, "a failing result flagged recovered");
      failures.push_back(&r);
      continue;
    }
    MESH_CHECK(r.ok_streak >= 1 && r.reason == ProbeFailure::none && r.unanswered_since_ms == 0,
               "inconsistent ok result");
    if (bitmap.size() <= r.target / 8) bitmap.resize(r.target / 8 + 1, 0);
    bitmap[r.target / 8] |= static_cast<std::uint8_t>(1u << (r.target % 8));
    if (r.recovered) {
      if (recovered.size() <= r.target / 8) recovered.resize(r.target / 8 + 1, 0);
      recovered[r.target / 8] |= static_cast<std::uint8_t>(1u << (r.target % 8));
    }
    min_streak = min_streak == 0 ? r.ok_streak : std::min(min_streak, r.ok_streak);
    oldest_ms = std::min(oldest_ms, r.last_probe_ms);
  }
  std::sort(failures.begin(), failures.end(),
            [](const ProbeResult* a, const ProbeResult* b) { return a->target < b->target; });
  packer.pack_array(recovered.empty() ? kViewFields : kViewFieldsRecovered);
  packer.pack_uint64(view.roster_version);
  pack_target_set(packer, bitmap);
  packer.pack_uint32(std::min(min_streak, kStreakMax));
  packer.pack_uint64(age_of(oldest_ms, timestamp_ms));
  packer.pack_array(static_cast<std::uint32_t>(failures.size()));
  for (const ProbeResult* r : failures) pack_failure(packer, *r, timestamp_ms);
  if (!recovered.empty()) pack_target_set(packer, recovered);
}

}  // namespace

const char* to_string(ProbeFailure failure) {
  switch (failure) {
    case ProbeFailure::none: return "none";
    case ProbeFailure::tcp_timeout: return "tcp_timeout";
    case ProbeFailure::tcp_refused: return "tcp_refused";
    case ProbeFailure::tcp_reset: return "tcp_reset";
    case ProbeFailure::tcp_unreachable: return "tcp_unreachable";
    case ProbeFailure::tls_timeout: return "tls_timeout";
    case ProbeFailure::tls_reset: return "tls_reset";
    case ProbeFailure::tls_alert: return "tls_alert";
    case ProbeFailure::tls_bad_peer: return "tls_bad_peer";
  }
  return "unknown";
}

const char* to_string(ReportError error) {
  switch (error) {
    case ReportError::malformed: return "malformed";
    case ReportError::oversize: return "oversize";
    case ReportError::unknown_target: return "unknown_target";
    case ReportError::self_target: return "self_target";
    case ReportError::repeated_target: return "repeated_target";
    case ReportError::impossible_value: return "impossible_value";
  }
  return "unknown";
}

Bytes encode_report_payload(const Report& report, UnixMs record_timestamp_ms) {
  msgpack::sbuffer buffer;
  Packer packer(buffer);
  const std::uint64_t flags = (report.warming ? kReportFlagWarming : 0) |
                              (report.alert_sender ? kReportFlagAlertSender : 0);
  packer.pack_array(flags != 0 ? kReportFieldsFlagged : kReportFields);
  pack_self_check(packer, report.self_check, report.flapping);
  pack_metrics(packer, report.metrics);
  pack_view(packer, report.view, record_timestamp_ms);
  if (flags != 0) packer.pack_uint64(flags);
  MESH_CHECK(buffer.size() <= kReportPayloadBytesMax, "report payload over its limit");
  const auto* begin = reinterpret_cast<const std::uint8_t*>(buffer.data());
  return Bytes(begin, begin + buffer.size());
}

}  // namespace mesh

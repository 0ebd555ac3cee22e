// The report payload decoder as it was before the hand-rolled reader
// (one msgpack-c unpack under unpack_limit, then the object tree), kept only
// as the reference of the differential test. Not used by the library.
#include <algorithm>
#include <limits>
#include <msgpack.hpp>

#include "record/address.h"
#include "record/report_layout.h"
#include "record/roster.h"
#include "tests/record/legacy_decode.h"

namespace mesh::legacy {
namespace {

using Object = msgpack::object;

Error<ReportError> fail(ReportError code, const std::string& what) {
  return make_error(code, "report payload: " + what);
}

Result<const Object*, ReportError> as_array(const Object& o, const char* where, std::size_t count) {
  if (o.type != msgpack::type::ARRAY)
    return fail(ReportError::malformed, std::string(where) + ": not an array");
  if (o.via.array.size != count) {
    return fail(ReportError::malformed, std::string(where) + ": array of " +
                                            std::to_string(o.via.array.size) +
                                            " elements, expected " + std::to_string(count));
  }
  return o.via.array.ptr;
}

Result<std::uint64_t, ReportError> as_uint(const Object& o, const std::string& where,
                                           std::uint64_t max) {
  if (o.type != msgpack::type::POSITIVE_INTEGER) {
    return fail(ReportError::malformed, where + ": not a non-negative integer");
  }
  if (o.via.u64 > max) {
    return fail(ReportError::impossible_value,
                where + ": " + std::to_string(o.via.u64) + " is over " + std::to_string(max));
  }
  return o.via.u64;
}

// A time given as an age before the record timestamp.
Result<UnixMs, ReportError> as_time(const Object& o, const std::string& where, UnixMs timestamp) {
  auto age = as_uint(o, where, static_cast<std::uint64_t>(std::max<UnixMs>(timestamp, 0)));
  if (!age) return age.error();
  return timestamp - static_cast<UnixMs>(*age);
}

Result<SelfCheck, ReportError> decode_self_check(const Object& o, Flapping& flapping) {
  if (o.type != msgpack::type::ARRAY) return fail(ReportError::malformed, "self_check: not an array");
  const std::size_t count = o.via.array.size;
  if (count != kSelfCheckFields && count != kSelfCheckFieldsFlapping) {
    return fail(ReportError::malformed,
                "self_check: array of " + std::to_string(count) + " elements, expected 3 or 5");
  }
  const Object* fields = o.via.array.ptr;
  if (fields[0].type != msgpack::type::BOOLEAN || fields[1].type != msgpack::type::BOOLEAN) {
    return fail(ReportError::malformed, "self_check: listener_ok and service_ok must be booleans");
  }
  if (fields[2].type != msgpack::type::STR)
    return fail(ReportError::malformed, "self_check.reason: not a string");
  SelfCheck out{fields[0].via.boolean, fields[1].via.boolean,
                std::string(fields[2].via.str.ptr, fields[2].via.str.size)};
  if (!is_printable_utf8(out.reason)) {
    return fail(ReportError::malformed, "self_check.reason: not printable UTF-8");
  }
  if (count == kSelfCheckFields) return out;
  auto changes = as_uint(fields[3], "self_check.flap_changes", kFlapChangesMax);
  if (!changes) return changes.error();
  if (*changes == 0) {
    return fail(ReportError::malformed, "self_check.flap_changes: 0 is written by leaving it out");
  }
  auto hold = as_uint(fields[4], "self_check.hold_ms", static_cast<std::uint64_t>(kFlapHoldMsMax));
  if (!hold) return hold.error();
  flapping.changes = static_cast<std::uint32_t>(*changes);
  flapping.hold_ms = static_cast<DurationMs>(*hold);
  return out;
}

Result<Metrics, ReportError> decode_metrics(const Object& o) {
  auto f = as_array(o, "metrics", kMetricsFields);
  if (!f) return f.error();
  static const char* kNames[] = {"cpu_permille",        "memory_used_kib",    "memory_total_kib",
                                 "disk_used_mib",       "disk_total_mib",     "net_rx_bytes_per_s",
                                 "net_tx_bytes_per_s",  "load_average_milli", "uptime_s",
                                 "listener_connections"};
  constexpr std::uint64_t k32 = std::numeric_limits<std::uint32_t>::max();
  constexpr std::uint64_t k64 = std::numeric_limits<std::uint64_t>::max();
  static const std::uint64_t kMax[] = {
      kCpuPermilleMax, k64, k64, k64, k64, k64, k64, k32, k64, k32};
  std::uint64_t v[kMetricsFields];
  for (std::size_t i = 0; i < kMetricsFields; ++i) {
    auto value = as_uint((*f)[i], std::string("metrics.") + kNames[i], kMax[i]);
    if (!value) return value.error();
    v[i] = *value;
  }
  return Metrics{static_cast<std::uint32_t>(v[0]),
                 v[1],
                 v[2],
                 v[3],
                 v[4],
                 v[5],
                 v[6],
                 static_cast<std::uint32_t>(v[7]),
                 v[8],
                 static_cast<std::uint32_t>(v[9])};
}

// What the view's target rules are checked against.
struct TargetRules {
  std::uint32_t size;                         // targets must be below this
  std::optional<std::uint32_t> origin_index;  // the reporter itself, if known
};

Status<ReportError> check_target(std::uint32_t target, const TargetRules& rules,
                                 const std::string& where) {
  if (target >= rules.size) {
    return fail(ReportError::unknown_target, where + ": target " + std::to_string(target) +
                                                 " is outside the roster of " +
                                                 std::to_string(rules.size));
  }
  if (rules.origin_index && target == *rules.origin_index) {
    return fail(ReportError::self_target,
                where + ": target " + std::to_string(target) + " is the reporter itself");
  }
  return Ok{};
}

Result<ProbeResult, ReportError> decode_failure(const Object& o, const std::string& where,
                                                UnixMs timestamp) {
  if (o.type != msgpack::type::ARRAY) return fail(ReportError::malformed, where + ": not an array");
  const std::size_t count = o.via.array.size;
  if (count != kFailureFields && count != kFailureFieldsUnanswered) {
    return fail(ReportError::malformed,
                where + ": array of " + std::to_string(count) + " elements, expected 5 or 6");
  }
  const Object* fields = o.via.array.ptr;
  ProbeResult r;
  auto target = as_uint(fields[0], where + ".target", std::numeric_limits<std::uint64_t>::max());
  if (!target) return target.error();
  if (*target >= kReportTargetsMax) {
    return fail(ReportError::unknown_target,
                where + ".target: " + std::to_string(*target) + " is beyond any roster");
  }
  r.target = static_cast<std::uint32_t>(*target);
  auto streak = as_uint(fields[1], where + ".fail_streak", kStreakMax);
  if (!streak) return streak.error();
  if (*streak == 0)
    return fail(ReportError::impossible_value, where + ".fail_streak: 0 on a failing target");
  r.fail_streak = static_cast<std::uint32_t>(*streak);
  auto probe = as_time(fields[2], where + ".last_probe_age_ms", timestamp);
  if (!probe) return probe.error();
  r.last_probe_ms = *probe;
  if (fields[3].type != msgpack::type::NIL) {
    auto ok = as_time(fields[3], where + ".last_ok_age_ms", timestamp);
    if (!ok) return ok.error();
    if (*ok > r.last_probe_ms || *ok <= 0) {
      return fail(ReportError::impossible_value,
                  where + ".last_ok_age_ms: after the last probe or at time 0");
    }
    r.last_ok_ms = *ok;
  }
  auto reason = as_uint(fields[4], where + ".reason", kProbeFailureMax);
  if (!reason) return reason.error();
  if (*reason == 0)
    return fail(ReportError::impossible_value, where + ".reason: none on a failing target");
  r.reason = static_cast<ProbeFailure>(*reason);
  if (count == kFailureFieldsUnanswered) {
    auto since = as_time(fields[5], where + ".unanswered_since_age_ms", timestamp);
    if (!since) return since.error();
    if (*since > r.last_probe_ms || *since <= r.last_ok_ms || *since <= 0) {
      return fail(ReportError::impossible_value, where + ".unanswered_since_age_ms" +
                                                     ": after the last probe, at or before the last ok, or at time 0");
    }
    r.unanswered_since_ms = *since;
  }
  return r;
}

// A target set, a bitmap (bin) or gaps (array of uints), as its bitmap.
Result<std::vector<std::uint8_t>, ReportError> target_set(const Object& o, const std::string& field) {
  if (o.type == msgpack::type::BIN) {
    const auto* bits = reinterpret_cast<const std::uint8_t*>(o.via.bin.ptr);
    std::vector<std::uint8_t> out(bits, bits + o.via.bin.size);
    if (!out.empty() && out.back() == 0) return fail(ReportError::malformed, field + ": trailing zero byte");
    return out;
  }
  if (o.type != msgpack::type::ARRAY) return fail(ReportError::malformed, field + ": not a bin or an array");
  if (o.via.array.size == 0) return fail(ReportError::malformed, field + ": empty array");
  std::vector<std::uint8_t> out;
  std::uint64_t target = 0;
  for (std::uint32_t i = 0; i < o.via.array.size; ++i) {
    const Object& gap = o.via.array.ptr[i];
    if (gap.type != msgpack::type::POSITIVE_INTEGER) return fail(ReportError::malformed, field + ": not a uint");
    if (i > 0 && gap.via.u64 == 0) return fail(ReportError::repeated_target, field + ": gap 0");
    if (gap.via.u64 >= kReportTargetsMax || (target += gap.via.u64) >= kReportTargetsMax) {
      return fail(ReportError::unknown_target, field + ": beyond any roster");
    }
    out.resize(target / 8 + 1, 0);
    out[target / 8] |= static_cast<std::uint8_t>(1u << (target % 8));
  }
  return out;
}

// Expands the bitmap into ok results carrying the summary values.
Result<std::vector<ProbeResult>, ReportError> decode_ok_targets(const Object* f,
                                                                const TargetRules& rules,
                                                                UnixMs timestamp) {
  auto set = target_set(f[1], "view.ok_bitmap");
  if (!set) return set.error();
  const std::uint8_t* bits = set->data();
  const auto bytes = static_cast<std::uint32_t>(set->size());
  auto streak = as_uint(f[2], "view.ok_min_streak", kStreakMax);
  if (!streak) return streak.error();
  auto oldest = as_time(f[3], "view.ok_oldest_age_ms", timestamp);
  if (!oldest) return oldest.error();
  if (bytes == 0 && (*streak != 0 || *oldest != timestamp)) {
    return fail(ReportError::impossible_value, "view: ok summary set but no ok targets");
  }
  if (bytes > 0 && *streak == 0)
    return fail(ReportError::impossible_value, "view.ok_min_streak: 0 with ok targets");
  std::vector<ProbeResult> out;
  for (std::uint32_t i = 0; i < bytes * 8; ++i) {
    if ((bits[i / 8] >> (i % 8) & 1) == 0) continue;
    if (auto status = check_target(i, rules, "view.ok_bitmap"); !status) return status.error();
    out.push_back(ProbeResult{i, 0, static_cast<std::uint32_t>(*streak), *oldest, *oldest,
                              ProbeFailure::none});
  }
  return out;
}

Result<ProbeView, ReportError> decode_view(const Object& o, const Roster& roster,
                                           std::uint32_t origin_index, UnixMs timestamp) {
  // Five elements, or six with the recovered bitmap.
  const bool six = o.type == msgpack::type::ARRAY && o.via.array.size == kViewFieldsRecovered;
  auto f = as_array(o, "view", six ? kViewFieldsRecovered : kViewFields);
  if (!f) return f.error();
  ProbeView view;
  auto version = as_uint((*f)[0], "view.roster_version", std::numeric_limits<std::uint64_t>::max());
  if (!version) return version.error();
  view.roster_version = *version;
  TargetRules rules{kReportTargetsMax, std::nullopt};
  if (view.roster_version == roster.version) {
    rules = {static_cast<std::uint32_t>(roster.servers.size()), origin_index};
  }
  auto ok = decode_ok_targets(*f, rules, timestamp);
  if (!ok) return ok.error();
  const Object& list = (*f)[4];
  if (list.type != msgpack::type::ARRAY)
    return fail(ReportError::malformed, "view.failures: not an array");
  std::vector<ProbeResult> failures;
  for (std::uint32_t i = 0; i < list.via.array.size; ++i) {
    std::string where = "view.failures[" + std::to_string(i) + "]";
    auto r = decode_failure(list.via.array.ptr[i], where, timestamp);
    if (!r) return r.error();
    if (auto status = check_target(r->target, rules, where); !status) return status.error();
    if (!failures.empty() && r->target <= failures.back().target) {
      ReportError code = r->target == failures.back().target ? ReportError::repeated_target
                                                             : ReportError::malformed;
      return fail(code,
                  where + ": target " + std::to_string(r->target) + " repeated or out of order");
    }
    failures.push_back(*r);
  }
  // Merge the two sorted lists; a target in both is repeated.
  std::size_t a = 0, b = 0;
  while (a < ok->size() || b < failures.size()) {
    bool take_ok = b == failures.size() || (a < ok->size() && (*ok)[a].target < failures[b].target);
    if (a < ok->size() && b < failures.size() && (*ok)[a].target == failures[b].target) {
      return fail(ReportError::repeated_target,
                  "view: target " + std::to_string(failures[b].target) + " is both ok and failing");
    }
    view.results.push_back(take_ok ? (*ok)[a++] : failures[b++]);
  }
  if (!six) return view;
  auto recovered = target_set((*f)[5], "view.recovered");
  if (!recovered) return recovered.error();
  const std::uint8_t* bits = recovered->data();
  const auto bytes = static_cast<std::uint32_t>(recovered->size());
  if (bytes == 0) return fail(ReportError::malformed, "view.recovered: empty");
  for (std::uint32_t i = 0; i < bytes * 8; ++i) {
    if ((bits[i / 8] >> (i % 8) & 1) == 0) continue;
    auto it = std::find_if(view.results.begin(), view.results.end(),
                           [i](const ProbeResult& r) { return r.target == i; });
    if (it == view.results.end() || it->fail_streak != 0) {
      return fail(ReportError::impossible_value, "view.recovered: target is not an ok target");
    }
    it->recovered = true;
  }
  return view;
}

}  // namespace

Result<Report, ReportError> decode_report_payload_msgpack_c(ByteView payload, const Roster& roster,
                                                  std::uint32_t origin_index,
                                                  UnixMs record_timestamp_ms) {
  if (payload.size() > kReportPayloadBytesMax)
    return fail(ReportError::oversize, "over 65536 bytes");
  msgpack::unpack_limit limit(kReportTargetsMax, 0, kSelfCheckReasonBytesMax, kOkBitmapBytesMax, 0,
                              kReportDepthMax);
  msgpack::object_handle handle;
  std::size_t offset = 0;
  try {
    msgpack::unpack(handle, reinterpret_cast<const char*>(payload.data()), payload.size(), offset,
                    nullptr, nullptr, limit);
  } catch (const msgpack::depth_size_overflow&) {
    return fail(ReportError::malformed, "not valid msgpack (nested deeper than the layout)");
  } catch (const msgpack::str_size_overflow&) {
    return fail(ReportError::oversize, "self_check.reason: longer than 120 bytes");
  } catch (const msgpack::bin_size_overflow&) {
    return fail(ReportError::oversize, "view.ok_bitmap: longer than 512 bytes");
  } catch (const msgpack::array_size_overflow&) {
    return fail(ReportError::oversize, "an array longer than 4096 elements");
  } catch (const std::exception&) {
    return fail(ReportError::malformed,
                "not valid msgpack (truncated, too deep or an unused type)");
  }
  if (offset != payload.size()) {
    return fail(ReportError::malformed,
                std::to_string(payload.size() - offset) + " trailing bytes");
  }
  // Three elements, or four with the flags.
  const Object& top = handle.get();
  const bool flagged = top.type == msgpack::type::ARRAY && top.via.array.size == kReportFieldsFlagged;
  if (top.type == msgpack::type::ARRAY && !flagged && top.via.array.size != kReportFields) {
    return fail(ReportError::malformed, "top level: array of " + std::to_string(top.via.array.size) +
                                            " elements, expected 3 or 4");
  }
  auto f = as_array(top, "top level", flagged ? kReportFieldsFlagged : kReportFields);
  if (!f) return f.error();
  Flapping flapping;
  auto self_check = decode_self_check((*f)[0], flapping);
  if (!self_check) return self_check.error();
  auto metrics = decode_metrics((*f)[1]);
  if (!metrics) return metrics.error();
  auto view = decode_view((*f)[2], roster, origin_index, record_timestamp_ms);
  if (!view) return view.error();
  Report report{std::move(*self_check), *metrics, std::move(*view), flapping};
  if (!flagged) return report;
  auto flags = as_uint((*f)[3], "flags", std::numeric_limits<std::uint64_t>::max());
  if (!flags) return flags.error();
  if (*flags == 0) return fail(ReportError::malformed, "flags: 0 is written by leaving it out");
  if ((*flags & ~kReportFlagsKnown) != 0) {
    return fail(ReportError::impossible_value, "flags: " + std::to_string(*flags) + " sets an unknown bit");
  }
  report.warming = (*flags & kReportFlagWarming) != 0;
  report.alert_sender = (*flags & kReportFlagAlertSender) != 0;
  return report;
}

}  // namespace mesh::legacy

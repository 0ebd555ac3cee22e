// Report payload decoder: strict structure, then the target rules against
// the roster when the view is on the current roster version.
//
// One pass with the strict cursor of record/msgpack_reader.h decodes and
// checks every rule in value order, allocating only the reason and the
// results. The contract (docs/PROTOCOL.md, "Report payload") puts structure
// first: a payload that is not well-formed msgpack within the limits is
// refused for that, even if an earlier value already broke a rule. So when
// the pass fails, a structural walk of the whole payload decides which error
// is reported. The accepted path never walks twice.
//
// The same pass serves validate_report_payload: a compile-time `Keep` says
// whether it builds the Report or only checks. Checking skips exactly the
// copies (the reason string, the results vector and the merge of the ok
// targets into it); every rule and message is the one code path both share.
#include <algorithm>
#include <array>
#include <bit>
#include <cstring>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "record/address.h"
#include "record/msgpack_reader.h"
#include "record/report.h"
#include "record/report_layout.h"
#include "record/roster.h"

namespace mesh {
namespace {

using msgpack_reader::Reader;
using msgpack_reader::ReadStatus;

constexpr std::uint64_t kUint64Max = std::numeric_limits<std::uint64_t>::max();

// What a pass keeps: the whole Report (decode_report_payload), or only the
// verdict (validate_report_payload; no heap allocation unless it fails).
enum class Keep { report, verdict };

Error<ReportError> fail(ReportError code, const std::string& what) {
  return make_error(code, "report payload: " + what);
}

constexpr msgpack_reader::SkipLimits kStructureLimits{kSelfCheckReasonBytesMax, kOkBitmapBytesMax,
                                                     kReportTargetsMax, kReportDepthMax};

// The layout's bin that is over kOkBitmapBytesMax ("view.ok_bitmap" or
// "view.recovered"), for the message: the structural walk only knows that
// some bin is. "a bin" when the long bin is not where the layout has one.
std::string oversized_bin(ByteView payload) {
  Reader reader(payload);
  std::uint32_t count = 0;
  ByteView bin;
  auto skip = [&](int values) {
    for (int i = 0; i < values; ++i) {
      if (reader.skip_value(kStructureLimits) != ReadStatus::ok) return false;
    }
    return true;
  };
  if (reader.read_array_header(&count) != ReadStatus::ok ||
      (count != kReportFields && count != kReportFieldsFlagged) || !skip(2) ||
      reader.read_array_header(&count) != ReadStatus::ok ||
      (count != kViewFields && count != kViewFieldsRecovered) || !skip(1)) {
    return "a bin";
  }
  const ReadStatus ok_bitmap = reader.read_bin(&bin, kOkBitmapBytesMax);
  if (ok_bitmap == ReadStatus::bin_too_long) return "view.ok_bitmap";
  const bool read = ok_bitmap == ReadStatus::ok || (ok_bitmap == ReadStatus::wrong_type && skip(1));  // gaps
  if (read && count == kViewFieldsRecovered && skip(3) &&  // streak, age, failures
      reader.read_bin(&bin, kOkBitmapBytesMax) == ReadStatus::bin_too_long) {
    return "view.recovered";
  }
  return "a bin";
}

// The structure alone: one msgpack value within the layout's limits
// (kReportDepthMax, strings, bins and arrays), nothing after it.
Status<ReportError> check_structure(ByteView payload) {
  Reader reader(payload);
  switch (reader.skip_value(kStructureLimits)) {
    case ReadStatus::ok: break;
    case ReadStatus::too_deep:
      return fail(ReportError::malformed, "not valid msgpack (nested deeper than the layout)");
    case ReadStatus::str_too_long:
      return fail(ReportError::oversize, "self_check.reason: longer than 120 bytes");
    case ReadStatus::bin_too_long:
      return fail(ReportError::oversize, oversized_bin(payload) + ": longer than 512 bytes");
    case ReadStatus::array_too_long:
      return fail(ReportError::oversize, "an array longer than 4096 elements");
    default:
      return fail(ReportError::malformed,
                  "not valid msgpack (truncated, too deep or an unused type)");
  }
  if (!reader.at_end()) {
    return fail(ReportError::malformed, std::to_string(reader.remaining()) + " trailing bytes");
  }
  return Ok{};
}

auto named(const char* name) {
  return [name] { return std::string(name); };
}

// `where` (a callable giving the field's name) is called only on error, so
// that the accepted path does not build strings.
template <class Where>
Status<ReportError> expect_array(Reader& reader, const Where& where, std::uint32_t count) {
  std::uint32_t found = 0;
  if (reader.read_array_header(&found) != ReadStatus::ok) {
    return fail(ReportError::malformed, where() + ": not an array");
  }
  if (found != count) {
    return fail(ReportError::malformed, where() + ": array of " +
                                            std::to_string(found) + " elements, expected " +
                                            std::to_string(count));
  }
  return Ok{};
}

// An array of `shorter` elements, or `longer` with its optional ones; the
// count found. (The top level: 3, or 4 with the flags; a self-check: 3, or
// 5 with the flap hold-down.)
Result<std::uint32_t, ReportError> array_of(Reader& reader, const char* name, std::uint32_t shorter,
                                            std::uint32_t longer) {
  std::uint32_t found = 0;
  if (reader.read_array_header(&found) != ReadStatus::ok) {
    return fail(ReportError::malformed, std::string(name) + ": not an array");
  }
  if (found != shorter && found != longer) {
    return fail(ReportError::malformed, std::string(name) + ": array of " + std::to_string(found) +
                                            " elements, expected " + std::to_string(shorter) + " or " +
                                            std::to_string(longer));
  }
  return found;
}

Result<std::uint32_t, ReportError> top_level(Reader& reader) {
  return array_of(reader, "top level", kReportFields, kReportFieldsFlagged);
}

template <class Where>
Result<std::uint64_t, ReportError> read_uint(Reader& reader, const Where& where,
                                             std::uint64_t max) {
  std::uint64_t value = 0;
  if (reader.read_uint(&value) != ReadStatus::ok) {
    return fail(ReportError::malformed, where() + ": not a non-negative integer");
  }
  if (value > max) {
    return fail(ReportError::impossible_value,
                where() + ": " + std::to_string(value) + " is over " + std::to_string(max));
  }
  return value;
}

// The top level's fourth element (written only when a flag is set).
Result<std::uint64_t, ReportError> decode_flags(Reader& reader) {
  auto flags = read_uint(reader, named("flags"), kUint64Max);
  if (!flags) return flags.error();
  if (*flags == 0) {
    // One encoding per value: a report with no flag leaves the element out.
    return fail(ReportError::malformed, "flags: 0 is written by leaving it out");
  }
  if ((*flags & ~kReportFlagsKnown) != 0) {
    return fail(ReportError::impossible_value, "flags: " + std::to_string(*flags) + " sets an unknown bit");
  }
  return *flags;
}

// A time given as an age before the record timestamp.
template <class Where>
Result<UnixMs, ReportError> read_time(Reader& reader, const Where& where, UnixMs timestamp) {
  auto age = read_uint(reader, where, static_cast<std::uint64_t>(std::max<UnixMs>(timestamp, 0)));
  if (!age) return age.error();
  return timestamp - static_cast<UnixMs>(*age);
}

template <Keep kKeep>
Status<ReportError> decode_self_check(Reader& reader, SelfCheck& out, Flapping& flapping) {
  auto counted = array_of(reader, "self_check", kSelfCheckFields, kSelfCheckFieldsFlapping);
  if (!counted) return counted.error();
  const std::uint32_t fields = *counted;
  if (reader.read_bool(&out.listener_ok) != ReadStatus::ok ||
      reader.read_bool(&out.service_ok) != ReadStatus::ok) {
    return fail(ReportError::malformed, "self_check: listener_ok and service_ok must be booleans");
  }
  std::string_view reason;
  if (reader.read_str(&reason, kSelfCheckReasonBytesMax) != ReadStatus::ok) {
    return fail(ReportError::malformed, "self_check.reason: not a string");
  }
  if (!is_printable_utf8(reason)) {
    return fail(ReportError::malformed, "self_check.reason: not printable UTF-8");
  }
  if constexpr (kKeep == Keep::report) out.reason.assign(reason);
  if (fields == kSelfCheckFields) return Ok{};
  auto changes = read_uint(reader, named("self_check.flap_changes"), kFlapChangesMax);
  if (!changes) return changes.error();
  if (*changes == 0) {
    // One encoding per value: a node that did not flap leaves both out.
    return fail(ReportError::malformed, "self_check.flap_changes: 0 is written by leaving it out");
  }
  auto hold = read_uint(reader, named("self_check.hold_ms"), static_cast<std::uint64_t>(kFlapHoldMsMax));
  if (!hold) return hold.error();
  flapping.changes = static_cast<std::uint32_t>(*changes);
  flapping.hold_ms = static_cast<DurationMs>(*hold);
  return Ok{};
}

Result<Metrics, ReportError> decode_metrics(Reader& reader) {
  if (auto status = expect_array(reader, named("metrics"), kMetricsFields); !status) {
    return status.error();
  }
  static const char* kNames[] = {"cpu_permille",        "memory_used_kib",    "memory_total_kib",
                                 "disk_used_mib",       "disk_total_mib",     "net_rx_bytes_per_s",
                                 "net_tx_bytes_per_s",  "load_average_milli", "uptime_s",
                                 "listener_connections"};
  constexpr std::uint64_t k32 = std::numeric_limits<std::uint32_t>::max();
  constexpr std::uint64_t k64 = kUint64Max;
  static const std::uint64_t kMax[] = {
      kCpuPermilleMax, k64, k64, k64, k64, k64, k64, k32, k64, k32};
  std::uint64_t v[kMetricsFields];
  for (std::size_t i = 0; i < kMetricsFields; ++i) {
    auto where = [i] { return std::string("metrics.") + kNames[i]; };
    auto value = read_uint(reader, where, kMax[i]);
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

template <class Where>
Status<ReportError> check_target(std::uint32_t target, const TargetRules& rules,
                                 const Where& where) {
  if (target >= rules.size) {
    return fail(ReportError::unknown_target, where() + ": target " + std::to_string(target) +
                                                 " is outside the roster of " +
                                                 std::to_string(rules.size));
  }
  if (rules.origin_index && target == *rules.origin_index) {
    return fail(ReportError::self_target,
                where() + ": target " + std::to_string(target) + " is the reporter itself");
  }
  return Ok{};
}

// The ok targets: a trimmed bitmap and the summary every one of them gets.
struct OkTargets {
  ByteView bitmap;
  std::uint32_t count = 0;  // bits set
  std::uint32_t streak = 0;
  UnixMs oldest_ms = 0;

  bool has(std::uint32_t target) const {
    return target / 8 < bitmap.size() && (bitmap[target / 8] >> (target % 8) & 1) != 0;
  }
};

// A bitmap of the largest roster, on the caller's stack: where a target
// set written as gaps is expanded.
using TargetBits = std::array<std::uint8_t, kOkBitmapBytesMax>;

// One set of targets (view.ok_bitmap, view.recovered) in either of its forms
// (docs/PROTOCOL.md, "Report payload", "Target sets"): a trimmed bitmap
// (bin), or the targets in ascending order as gaps (a non-empty array of
// uints: the first target, then each one's distance from the one before,
// at least 1). Gaps are expanded into `scratch`, so both forms read alike
// from here on and nothing is allocated. Checks only what the form itself
// can break (and targets beyond any roster); the roster's rules come after.
Result<ByteView, ReportError> read_target_set(Reader& reader, const char* field, TargetBits& scratch) {
  ByteView bits;
  const ReadStatus bin = reader.read_bin(&bits, kOkBitmapBytesMax);
  if (bin == ReadStatus::ok) {
    if (!bits.empty() && bits[bits.size() - 1] == 0) {
      return fail(ReportError::malformed, std::string(field) + ": trailing zero byte (must be trimmed)");
    }
    return bits;
  }
  std::uint32_t count = 0;
  if (bin != ReadStatus::wrong_type || reader.read_array_header(&count, kReportTargetsMax) != ReadStatus::ok) {
    return fail(ReportError::malformed, std::string(field) + ": not a bin or an array");
  }
  if (count == 0) {
    return fail(ReportError::malformed, std::string(field) + ": an empty array (no target is an empty bin)");
  }
  scratch.fill(0);
  std::uint64_t target = 0;
  for (std::uint32_t i = 0; i < count; ++i) {
    auto where = [&] { return std::string(field) + "[" + std::to_string(i) + "]"; };
    std::uint64_t gap = 0;
    if (reader.read_uint(&gap) != ReadStatus::ok) {
      return fail(ReportError::malformed, where() + ": not an unsigned integer");
    }
    if (i > 0 && gap == 0) return fail(ReportError::repeated_target, where() + ": a gap of 0 repeats a target");
    if (gap >= kReportTargetsMax || (target += gap) >= kReportTargetsMax) {
      return fail(ReportError::unknown_target, where() + ": a target beyond any roster");
    }
    scratch[target / 8] |= static_cast<std::uint8_t>(1u << (target % 8));
  }
  return ByteView(scratch.data(), static_cast<std::size_t>(target / 8 + 1));
}

// Reads view elements 1..3 and checks every ok target against `rules`.
Result<OkTargets, ReportError> decode_ok_targets(Reader& reader, const TargetRules& rules,
                                                 UnixMs timestamp, TargetBits& scratch) {
  OkTargets ok;
  auto bits = read_target_set(reader, "view.ok_bitmap", scratch);
  if (!bits) return bits.error();
  ok.bitmap = *bits;
  std::size_t bytes = ok.bitmap.size();
  auto streak = read_uint(reader, named("view.ok_min_streak"), kStreakMax);
  if (!streak) return streak.error();
  auto oldest = read_time(reader, named("view.ok_oldest_age_ms"), timestamp);
  if (!oldest) return oldest.error();
  if (bytes == 0 && (*streak != 0 || *oldest != timestamp)) {
    return fail(ReportError::impossible_value, "view: ok summary set but no ok targets");
  }
  if (bytes > 0 && *streak == 0) {
    return fail(ReportError::impossible_value, "view.ok_min_streak: 0 with ok targets");
  }
  ok.streak = static_cast<std::uint32_t>(*streak);
  ok.oldest_ms = *oldest;
  if (bytes * 8 <= rules.size && !(rules.origin_index && ok.has(*rules.origin_index))) {
    // Every bit is a target inside the roster and none is the reporter: no
    // rule can break, so count the bits a word at a time.
    std::size_t byte = 0;
    for (; byte + 8 <= bytes; byte += 8) {
      std::uint64_t word = 0;
      std::memcpy(&word, ok.bitmap.data() + byte, sizeof word);
      ok.count += static_cast<std::uint32_t>(std::popcount(word));
    }
    for (; byte < bytes; ++byte) ok.count += static_cast<std::uint32_t>(std::popcount(ok.bitmap[byte]));
    return ok;
  }
  for (std::size_t byte = 0; byte < bytes; ++byte) {
    for (unsigned bits = ok.bitmap[byte]; bits != 0; bits &= bits - 1) {
      auto target = static_cast<std::uint32_t>(byte * 8 + std::countr_zero(bits));
      if (auto status = check_target(target, rules, named("view.ok_bitmap")); !status) {
        return status.error();
      }
      ++ok.count;
    }
  }
  return ok;
}

// One failure entry [target, streak, probe age, ok age | nil, reason] or
// [..., reason, unanswered since age].
Result<ProbeResult, ReportError> decode_failure(Reader& reader, std::uint32_t index,
                                                UnixMs timestamp) {
  auto where = [index](const char* field) {
    return [index, field] {
      return "view.failures[" + std::to_string(index) + "]" + field;
    };
  };
  std::uint32_t fields = 0;
  if (reader.read_array_header(&fields) != ReadStatus::ok) {
    return fail(ReportError::malformed, where("")() + ": not an array");
  }
  if (fields != kFailureFields && fields != kFailureFieldsUnanswered) {
    return fail(ReportError::malformed, where("")() + ": array of " + std::to_string(fields) +
                                            " elements, expected 5 or 6");
  }
  ProbeResult r;
  auto target = read_uint(reader, where(".target"), kUint64Max);
  if (!target) return target.error();
  if (*target >= kReportTargetsMax) {
    return fail(ReportError::unknown_target,
                where(".target")() + ": " + std::to_string(*target) + " is beyond any roster");
  }
  r.target = static_cast<std::uint32_t>(*target);
  auto streak = read_uint(reader, where(".fail_streak"), kStreakMax);
  if (!streak) return streak.error();
  if (*streak == 0) {
    return fail(ReportError::impossible_value, where(".fail_streak")() + ": 0 on a failing target");
  }
  r.fail_streak = static_cast<std::uint32_t>(*streak);
  auto probe = read_time(reader, where(".last_probe_age_ms"), timestamp);
  if (!probe) return probe.error();
  r.last_probe_ms = *probe;
  if (reader.next_is_nil()) {
    (void)reader.read_nil();
  } else {
    auto ok = read_time(reader, where(".last_ok_age_ms"), timestamp);
    if (!ok) return ok.error();
    if (*ok > r.last_probe_ms || *ok <= 0) {
      return fail(ReportError::impossible_value,
                  where(".last_ok_age_ms")() + ": after the last probe or at time 0");
    }
    r.last_ok_ms = *ok;
  }
  auto reason = read_uint(reader, where(".reason"), kProbeFailureMax);
  if (!reason) return reason.error();
  if (*reason == 0) {
    return fail(ReportError::impossible_value, where(".reason")() + ": none on a failing target");
  }
  r.reason = static_cast<ProbeFailure>(*reason);
  if (fields == kFailureFieldsUnanswered) {
    auto since = read_time(reader, where(".unanswered_since_age_ms"), timestamp);
    if (!since) return since.error();
    if (*since > r.last_probe_ms || *since <= r.last_ok_ms || *since <= 0) {
      return fail(ReportError::impossible_value, where(".unanswered_since_age_ms")() +
                                                     ": after the last probe, at or before the last ok, or at time 0");
    }
    r.unanswered_since_ms = *since;
  }
  return r;
}

// Merges the ok targets into `results`, whose front holds the `count`
// failures in target order and whose size leaves room for the ok ones.
void merge_ok_targets(const OkTargets& ok, std::uint32_t count,
                      std::vector<ProbeResult>& results) {
  // Merge from the back. The ok entries come from the bitmap, and `out` stays
  // ahead of the unread failures [0, failure) by the ok entries still to
  // write, so nothing unread is overwritten.
  std::size_t out = results.size();
  std::size_t failure = count;
  std::int64_t bit = static_cast<std::int64_t>(ok.bitmap.size()) * 8 - 1;
  auto next_ok = [&] {
    while (bit >= 0 && !ok.has(static_cast<std::uint32_t>(bit))) --bit;
  };
  next_ok();
  while (out > 0) {
    if (failure > 0 && (bit < 0 || static_cast<std::int64_t>(results[failure - 1].target) > bit)) {
      results[--out] = results[--failure];
    } else {
      auto target = static_cast<std::uint32_t>(bit--);
      results[--out] = ProbeResult{target, 0, ok.streak, ok.oldest_ms, ok.oldest_ms,
                                   ProbeFailure::none};
      next_ok();
    }
  }
}

// Checks the failures list; with Keep::report also decodes it into the front
// of `results` and merges the ok targets in, in target order, in place.
template <Keep kKeep>
Status<ReportError> decode_failures(Reader& reader, const OkTargets& ok,
                                    const TargetRules& rules, UnixMs timestamp,
                                    std::vector<ProbeResult>& results) {
  std::uint32_t count = 0;
  if (reader.read_array_header(&count, kReportTargetsMax) != ReadStatus::ok ||
      count > reader.remaining()) {  // each entry takes at least one byte
    return fail(ReportError::malformed, "view.failures: not an array");
  }
  if constexpr (kKeep == Keep::report) results.resize(std::size_t{ok.count} + count);
  std::uint32_t previous = 0;         // the target of failure i - 1
  std::optional<std::uint32_t> both;  // the first target both ok and failing
  for (std::uint32_t i = 0; i < count; ++i) {
    auto r = decode_failure(reader, i, timestamp);
    if (!r) return r.error();
    auto where = [i] { return "view.failures[" + std::to_string(i) + "]"; };
    if (auto status = check_target(r->target, rules, where); !status) return status.error();
    if (i > 0 && r->target <= previous) {
      ReportError code =
          r->target == previous ? ReportError::repeated_target : ReportError::malformed;
      return fail(code,
                  where() + ": target " + std::to_string(r->target) + " repeated or out of order");
    }
    previous = r->target;
    if (!both && ok.has(r->target)) both = r->target;
    if constexpr (kKeep == Keep::report) results[i] = *r;
  }
  if (both) {
    return fail(ReportError::repeated_target,
                "view: target " + std::to_string(*both) + " is both ok and failing");
  }
  if constexpr (kKeep == Keep::report) merge_ok_targets(ok, count, results);
  return Ok{};
}

// View element 5, present only when a target is flagged: a trimmed, non-empty
// bitmap of ok targets that recovered lately. With Keep::report the flags
// are set on `results` (in target order, ok targets merged in).
template <Keep kKeep>
Status<ReportError> decode_recovered(Reader& reader, const OkTargets& ok,
                                     std::vector<ProbeResult>& results) {
  TargetBits scratch;
  auto bits = read_target_set(reader, "view.recovered", scratch);
  if (!bits) return bits.error();
  const ByteView bitmap = *bits;
  if (bitmap.empty()) {
    return fail(ReportError::malformed, "view.recovered: empty (the element is left out instead)");
  }
  auto result = results.begin();
  for (std::size_t byte = 0; byte < bitmap.size(); ++byte) {
    for (unsigned bits = bitmap[byte]; bits != 0; bits &= bits - 1) {
      auto target = static_cast<std::uint32_t>(byte * 8 + std::countr_zero(bits));
      if (!ok.has(target)) {
        return fail(ReportError::impossible_value,
                    "view.recovered: target " + std::to_string(target) + " is not an ok target");
      }
      if constexpr (kKeep == Keep::report) {
        while (result->target != target) ++result;  // present: every ok target was merged in
        result->recovered = true;
      }
    }
  }
  return Ok{};
}

template <Keep kKeep>
Status<ReportError> decode_view(Reader& reader, const Roster& roster, std::uint32_t origin_index,
                                UnixMs timestamp, ProbeView& view) {
  std::uint32_t fields = 0;
  if (reader.read_array_header(&fields) != ReadStatus::ok) {
    return fail(ReportError::malformed, "view: not an array");
  }
  if (fields != kViewFields && fields != kViewFieldsRecovered) {
    return fail(ReportError::malformed, "view: array of " + std::to_string(fields) +
                                            " elements, expected 5 or 6");
  }
  auto version = read_uint(reader, named("view.roster_version"), kUint64Max);
  if (!version) return version.error();
  view.roster_version = *version;
  TargetRules rules{kReportTargetsMax, std::nullopt};
  if (view.roster_version == roster.version) {
    rules = {static_cast<std::uint32_t>(roster.servers.size()), origin_index};
  }
  TargetBits ok_scratch;  // the ok targets' bitmap when they came as gaps
  auto ok = decode_ok_targets(reader, rules, timestamp, ok_scratch);
  if (!ok) return ok.error();
  if (auto status = decode_failures<kKeep>(reader, *ok, rules, timestamp, view.results); !status) {
    return status;
  }
  if (fields == kViewFields) return Ok{};
  return decode_recovered<kKeep>(reader, *ok, view.results);
}

// Every rule, in value order; stops at the first broken one. With
// Keep::verdict, `out` gets no reason and no results (nothing allocated).
template <Keep kKeep>
Status<ReportError> decode_in_order(ByteView payload, const Roster& roster,
                                    std::uint32_t origin_index, UnixMs timestamp, Report& out) {
  Reader reader(payload);
  auto fields = top_level(reader);
  if (!fields) return fields.error();
  if (auto status = decode_self_check<kKeep>(reader, out.self_check, out.flapping); !status) return status;
  auto metrics = decode_metrics(reader);
  if (!metrics) return metrics.error();
  out.metrics = *metrics;
  if (auto status = decode_view<kKeep>(reader, roster, origin_index, timestamp, out.view);
      !status) {
    return status;
  }
  if (*fields == kReportFieldsFlagged) {
    auto flags = decode_flags(reader);
    if (!flags) return flags.error();
    out.warming = (*flags & kReportFlagWarming) != 0;
    out.alert_sender = (*flags & kReportFlagAlertSender) != 0;
  }
  if (!reader.at_end()) {
    return fail(ReportError::malformed, std::to_string(reader.remaining()) + " trailing bytes");
  }
  return Ok{};
}

// The whole contract: the size bound, the rules in value order, and on a
// broken rule the structural walk that may override it.
template <Keep kKeep>
Status<ReportError> decode_payload(ByteView payload, const Roster& roster,
                                   std::uint32_t origin_index, UnixMs timestamp, Report& out) {
  if (payload.size() > kReportPayloadBytesMax) {
    return fail(ReportError::oversize, "over 65536 bytes");
  }
  auto status = decode_in_order<kKeep>(payload, roster, origin_index, timestamp, out);
  if (status) return status;
  // A structural fault anywhere takes precedence over a broken rule before it.
  if (auto structure = check_structure(payload); !structure) return structure.error();
  return status;
}

}  // namespace

Result<Report, ReportError> decode_report_payload(ByteView payload, const Roster& roster,
                                                  std::uint32_t origin_index,
                                                  UnixMs record_timestamp_ms) {
  Report report;
  auto status =
      decode_payload<Keep::report>(payload, roster, origin_index, record_timestamp_ms, report);
  if (!status) return status.error();
  return report;
}

Result<ReportFailures, ReportError> decode_report_failures(ByteView payload,
                                                           UnixMs record_timestamp_ms) {
  if (payload.size() > kReportPayloadBytesMax) return fail(ReportError::oversize, "over 65536 bytes");
  Reader reader(payload);
  const msgpack_reader::SkipLimits limits{kSelfCheckReasonBytesMax, kOkBitmapBytesMax,
                                          kReportTargetsMax, kReportDepthMax};
  if (auto fields = top_level(reader); !fields) return fields.error();
  if (reader.skip_value(limits) != ReadStatus::ok || reader.skip_value(limits) != ReadStatus::ok) {
    return fail(ReportError::malformed, "self_check or metrics: not valid msgpack");
  }
  std::uint32_t fields = 0;
  if (reader.read_array_header(&fields) != ReadStatus::ok ||
      (fields != kViewFields && fields != kViewFieldsRecovered)) {
    return fail(ReportError::malformed, "view: not an array of 5 or 6 elements");
  }
  ReportFailures out;
  auto version = read_uint(reader, named("view.roster_version"), kUint64Max);
  if (!version) return version.error();
  out.roster_version = *version;
  for (int skipped = 0; skipped < 3; ++skipped) {  // ok targets (either form), their streak, their age
    if (reader.skip_value(limits) != ReadStatus::ok) {
      return fail(ReportError::malformed, "view: ok targets not valid msgpack");
    }
  }
  std::uint32_t count = 0;
  if (reader.read_array_header(&count, kReportTargetsMax) != ReadStatus::ok ||
      count > reader.remaining()) {
    return fail(ReportError::malformed, "view.failures: not an array");
  }
  out.failures.reserve(count);
  for (std::uint32_t i = 0; i < count; ++i) {
    auto r = decode_failure(reader, i, record_timestamp_ms);
    if (!r) return r.error();
    out.failures.push_back(*r);
  }
  return out;
}

Status<ReportError> validate_report_payload(ByteView payload, const Roster& roster,
                                            std::uint32_t origin_index,
                                            UnixMs record_timestamp_ms) {
  Report scratch;  // stays empty of heap: Keep::verdict copies no reason, no results
  return decode_payload<Keep::verdict>(payload, roster, origin_index, record_timestamp_ms,
                                       scratch);
}

}  // namespace mesh

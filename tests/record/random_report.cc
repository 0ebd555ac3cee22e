// A report is drawn as a model of its wire fields, broken by rule faults,
// then packed by a FaultWriter that can break the structure as it goes
// (replace one scalar by a value of another type or by a too-deep array,
// miscount one array), and finally cut or extended.
#include "tests/record/random_report.h"

#include <algorithm>
#include <bit>
#include <limits>
#include <optional>
#include <set>
#include <vector>

#include "record/envelope.h"
#include "record/report.h"
#include "record/report_layout.h"
#include "tests/record/fault_writer.h"

namespace mesh::test {
namespace {

constexpr std::uint64_t kU64Max = std::numeric_limits<std::uint64_t>::max();
constexpr std::uint64_t kU32Max = std::numeric_limits<std::uint32_t>::max();
constexpr std::uint64_t kTargetsMax = kReportTargetsMax;
constexpr std::size_t kBitmapBytesMax = kOkBitmapBytesMax;
constexpr std::size_t kPayloadBytesMax = kReportPayloadBytesMax;

enum class RuleFault {
  reason_too_long, reason_control, reason_bad_utf8, cpu_over, u32_over, bitmap_beyond_roster,
  bitmap_self, failure_beyond_roster, failure_beyond_any, failure_self, repeated, out_of_order,
  ok_and_failing, fail_streak_zero, fail_streak_over, probe_age_over, ok_after_probe,
  ok_at_zero, ok_age_over, reason_none, reason_over, bitmap_trailing_zero, summary_without_ok,
  ok_streak_zero, ok_streak_over, summary_age_over, recovered_not_ok, recovered_empty,
  recovered_trailing_zero, unanswered_after_probe, unanswered_before_ok, unanswered_over, flaps_zero,
  flaps_over, hold_over, flags_zero, flags_unknown, count
};
constexpr const char* kRuleFaultNames[] = {
  "reason_too_long", "reason_control", "reason_bad_utf8", "cpu_over", "u32_over",
  "bitmap_beyond_roster", "bitmap_self", "failure_beyond_roster", "failure_beyond_any",
  "failure_self", "repeated", "out_of_order", "ok_and_failing", "fail_streak_zero",
  "fail_streak_over", "probe_age_over", "ok_after_probe", "ok_at_zero", "ok_age_over",
  "reason_none", "reason_over", "bitmap_trailing_zero", "summary_without_ok", "ok_streak_zero",
  "ok_streak_over", "summary_age_over", "recovered_not_ok", "recovered_empty",
  "recovered_trailing_zero", "unanswered_after_probe", "unanswered_before_ok", "unanswered_over",
  "flaps_zero", "flaps_over", "hold_over", "flags_zero", "flags_unknown"};
static_assert(std::size(kRuleFaultNames) == static_cast<std::size_t>(RuleFault::count));

enum class WireFault {
  trailing_bytes, truncated, wrong_type, too_deep, miscounted_array, bitmap_too_long,
  failures_too_many, payload_too_big, count
};
constexpr const char* kWireFaultNames[] = {
  "trailing_bytes", "truncated", "wrong_type", "too_deep", "miscounted_array",
  "bitmap_too_long", "failures_too_many", "payload_too_big"};
static_assert(std::size(kWireFaultNames) == static_cast<std::size_t>(WireFault::count));

struct Failure {
  std::uint64_t target = 0;
  std::uint64_t streak = 1;
  std::uint64_t probe_age = 0;
  std::optional<std::uint64_t> ok_age;  // nil when never ok
  std::uint64_t reason = 1;
  std::optional<std::uint64_t> unanswered_age;  // the sixth element, when present
};

// A target set's form: its bitmap as a bin, or as gaps (an array of
// uints), perhaps with a broken gap appended: 0 (a repeated target) or one
// beyond any roster. A bitmap gaps cannot express (empty, or with a
// trailing zero byte) is written as a bin whatever the form.
enum class SetForm { bitmap, gaps, gaps_zero, gaps_beyond };

// The wire fields of a report payload, before packing.
struct Model {
  bool listener_ok = true;
  bool service_ok = true;
  std::string reason;
  std::optional<std::pair<std::uint64_t, std::uint64_t>> flapping;  // changes, hold_ms: the 4th and 5th self_check elements
  std::uint64_t metrics[10] = {};
  std::uint64_t version = 0;
  Bytes bitmap;
  std::uint64_t ok_streak = 0;
  std::uint64_t ok_age = 0;
  std::vector<Failure> failures;
  std::optional<Bytes> recovered;  // the sixth view element, when present
  std::optional<std::uint64_t> flags;  // the fourth top-level element, when present
  // How the two target sets are written (docs/PROTOCOL.md, "Target sets").
  SetForm ok_form = SetForm::bitmap;
  SetForm recovered_form = SetForm::bitmap;
};

// What the draw of one report works with.
struct Draw {
  std::mt19937& rng;
  std::uint64_t target_limit;            // targets valid below this
  std::optional<std::uint32_t> exclude;  // the origin, when the view is on the roster
  std::uint64_t age_max;                 // max(record timestamp, 0)

  std::uint64_t below(std::uint64_t n) { return n == 0 ? 0 : rng() % n; }
  std::uint64_t between(std::uint64_t low, std::uint64_t high) {  // inclusive
    if (high <= low) return low;
    std::uint64_t wide = (std::uint64_t{rng()} << 32) | rng();
    std::uint64_t span = high - low;
    return span == kU64Max ? wide : low + wide % (span + 1);
  }
  bool chance(unsigned percent) { return rng() % 100 < percent; }
};

void set_bit(Bytes& bitmap, std::uint64_t target) {
  if (bitmap.size() <= target / 8) bitmap.resize(target / 8 + 1, 0);
  bitmap[target / 8] |= static_cast<std::uint8_t>(1u << (target % 8));
}

std::string random_reason(Draw& d) {
  static const char* kPieces[] = {"a", "Z", " ", "0", "-", "listener", "\xc3\xa9",
                                  "\xe2\x86\x92", "\xf0\x9f\x98\x80"};
  std::string reason;
  std::size_t want = d.chance(50) ? d.below(16) : d.between(16, 120);
  while (true) {
    std::string piece = kPieces[d.below(std::size(kPieces))];
    if (reason.size() + piece.size() > want) break;
    reason += piece;
  }
  return reason;
}

Failure random_failure(Draw& d, std::uint64_t target) {
  Failure f;
  f.target = target;
  f.streak = d.chance(10) ? kStreakMax : d.between(1, 50);
  f.probe_age = d.between(0, std::min<std::uint64_t>(d.age_max, 10'000'000));
  if (f.probe_age < d.age_max && d.chance(50)) f.ok_age = d.between(f.probe_age, d.age_max - 1);
  f.reason = d.between(1, kProbeFailureMax);
  // Unanswered since a first failure at or before the last probe and
  // after the last ok (ages: at least the probe's, under the ok's).
  const std::uint64_t ok_age = f.ok_age ? *f.ok_age : d.age_max;
  if (d.chance(30) && f.probe_age < ok_age && f.probe_age < d.age_max) {
    f.unanswered_age = d.between(f.probe_age, std::min(ok_age, d.age_max) - 1);
  }
  return f;
}

Model random_valid_model(Draw& d, std::uint64_t version) {
  Model m;
  m.listener_ok = d.chance(80);
  m.service_ok = d.chance(80);
  m.reason = random_reason(d);
  if (d.chance(20)) m.flapping = {d.between(1, kFlapChangesMax), d.between(0, kFlapHoldMsMax)};
  if (d.chance(20)) m.flags = d.between(1, kReportFlagsKnown);
  for (std::uint64_t& v : m.metrics) v = d.chance(20) ? kU64Max : d.between(0, 1ull << 40);
  for (int i : {7, 9}) m.metrics[i] = d.chance(20) ? kU32Max : d.below(kU32Max);
  m.metrics[0] = d.chance(20) ? 1000 : d.below(1001);
  m.version = version;
  std::set<std::uint64_t> ok, failing;
  std::uint64_t want_ok = d.below(std::min<std::uint64_t>(d.target_limit, 200) + 1);
  std::uint64_t want_failing = d.below(std::min<std::uint64_t>(d.target_limit, 8) + 1);
  for (int attempt = 0; attempt < 600; ++attempt) {
    std::uint64_t target = d.below(d.target_limit);
    if (d.exclude && target == *d.exclude) continue;
    if (ok.size() < want_ok && !failing.count(target)) {
      ok.insert(target);
    } else if (failing.size() < want_failing && !ok.count(target)) {
      failing.insert(target);
    }
  }
  for (std::uint64_t target : ok) set_bit(m.bitmap, target);
  if (!ok.empty()) {
    m.ok_streak = d.chance(10) ? kStreakMax : d.between(1, 5000);
    m.ok_age = d.between(0, d.age_max);
  }
  for (std::uint64_t target : failing) m.failures.push_back(random_failure(d, target));
  if (!ok.empty() && d.chance(30)) {
    Bytes recovered;
    for (std::uint64_t target : ok) {
      if (d.chance(30)) set_bit(recovered, target);
    }
    if (recovered.empty()) set_bit(recovered, *ok.begin());
    m.recovered = recovered;
  }
  return m;
}

// A failure entry to break, adding a valid one first if there is none.
Failure& some_failure(Model& m, Draw& d) {
  if (m.failures.empty()) m.failures.push_back(random_failure(d, d.below(d.target_limit)));
  return m.failures[d.below(m.failures.size())];
}

void add_failure(Model& m, Failure f) {
  auto at = std::upper_bound(m.failures.begin(), m.failures.end(), f.target,
                             [](std::uint64_t t, const Failure& e) { return t < e.target; });
  m.failures.insert(at, f);
}

// The highest target set in `bitmap`, if any.
std::optional<std::uint64_t> some_ok_target(const Bytes& bitmap) {
  for (std::size_t byte = bitmap.size(); byte-- > 0;) {
    if (bitmap[byte] != 0) return byte * 8 + (std::bit_width(unsigned{bitmap[byte]}) - 1u);
  }
  return std::nullopt;
}

void add_ok_target(Model& m, Draw& d) {
  set_bit(m.bitmap, d.below(std::min<std::uint64_t>(d.target_limit, kTargetsMax)));
  if (m.ok_streak == 0) m.ok_streak = 1;
}

void apply_rule_fault(Model& m, RuleFault fault, Draw& d, std::uint32_t origin) {
  switch (fault) {
    case RuleFault::reason_too_long: m.reason.assign(d.between(121, 200), 'x'); break;
    case RuleFault::reason_control:
      m.reason.insert(d.below(m.reason.size() + 1), 1, d.chance(50) ? '\n' : '\x7f');
      break;
    case RuleFault::reason_bad_utf8: {
      static const char* kBad[] = {"\xc3", "\xed\xa0\x80", "\xc2\x80", "\xc0\xaf", "\xff"};
      m.reason.insert(d.below(m.reason.size() + 1), kBad[d.below(std::size(kBad))]);
      break;
    }
    case RuleFault::cpu_over: m.metrics[0] = d.between(1001, kU64Max); break;
    case RuleFault::u32_over: m.metrics[d.chance(50) ? 7 : 9] = d.between(kU32Max + 1, kU64Max); break;
    case RuleFault::bitmap_beyond_roster:
      set_bit(m.bitmap, d.between(d.target_limit, kTargetsMax - 1));
      if (m.ok_streak == 0) m.ok_streak = 1;
      break;
    case RuleFault::bitmap_self:
      set_bit(m.bitmap, origin);
      if (m.ok_streak == 0) m.ok_streak = 1;
      break;
    case RuleFault::failure_beyond_roster:
      add_failure(m, random_failure(d, d.between(d.target_limit, d.target_limit + 100)));
      break;
    case RuleFault::failure_beyond_any: {
      const std::uint64_t kBeyond[] = {kTargetsMax, kTargetsMax + 1, kU32Max, kU64Max};
      add_failure(m, random_failure(d, kBeyond[d.below(std::size(kBeyond))]));
      break;
    }
    case RuleFault::failure_self: add_failure(m, random_failure(d, origin)); break;
    case RuleFault::repeated: {
      Failure copy = some_failure(m, d);
      add_failure(m, d.chance(50) ? copy : random_failure(d, copy.target));
      break;
    }
    case RuleFault::out_of_order:
      if (m.failures.size() < 2) add_failure(m, random_failure(d, d.below(d.target_limit)));
      if (m.failures.size() >= 2) {
        std::size_t i = d.below(m.failures.size() - 1);
        std::swap(m.failures[i], m.failures[i + 1]);
      }
      break;
    case RuleFault::ok_and_failing: {
      std::optional<std::uint64_t> target = some_ok_target(m.bitmap);
      if (!target) {
        add_ok_target(m, d);
        target = some_ok_target(m.bitmap);
      }
      add_failure(m, random_failure(d, *target));
      break;
    }
    case RuleFault::fail_streak_zero: some_failure(m, d).streak = 0; break;
    case RuleFault::fail_streak_over: some_failure(m, d).streak = d.between(kStreakMax + 1, kU64Max); break;
    case RuleFault::probe_age_over: some_failure(m, d).probe_age = d.between(d.age_max + 1, kU64Max); break;
    case RuleFault::ok_after_probe: {
      Failure& f = some_failure(m, d);
      if (f.probe_age == 0) f.probe_age = 1;
      f.ok_age = d.below(f.probe_age);
      break;
    }
    case RuleFault::ok_at_zero: some_failure(m, d).ok_age = d.age_max; break;
    case RuleFault::ok_age_over: some_failure(m, d).ok_age = d.between(d.age_max + 1, kU64Max); break;
    case RuleFault::reason_none: some_failure(m, d).reason = 0; break;
    case RuleFault::reason_over: some_failure(m, d).reason = d.between(kProbeFailureMax + 1, 300); break;
    case RuleFault::bitmap_trailing_zero: m.bitmap.push_back(0); break;
    case RuleFault::summary_without_ok:
      m.bitmap.clear();
      (d.chance(50) ? m.ok_streak : m.ok_age) = d.between(1, 1000);
      break;
    case RuleFault::ok_streak_zero:
      if (m.bitmap.empty()) add_ok_target(m, d);
      m.ok_streak = 0;
      break;
    case RuleFault::ok_streak_over: m.ok_streak = d.between(kStreakMax + 1, kU64Max); break;
    case RuleFault::summary_age_over: m.ok_age = d.between(d.age_max + 1, kU64Max); break;
    case RuleFault::recovered_not_ok: {  // a failing target, or one with no result
      Bytes& recovered = m.recovered ? *m.recovered : m.recovered.emplace();
      // (A failure of an earlier fault may name a target beyond any roster.)
      const bool failing = !m.failures.empty() && m.failures[0].target < kTargetsMax && !d.chance(30);
      set_bit(recovered, failing ? m.failures[0].target : d.below(d.target_limit));
      break;
    }
    case RuleFault::recovered_empty: m.recovered = Bytes{}; break;
    case RuleFault::recovered_trailing_zero:
      if (!m.recovered) m.recovered = Bytes{0x01};
      m.recovered->push_back(0);
      break;
    case RuleFault::unanswered_after_probe: {
      Failure& f = some_failure(m, d);
      if (f.probe_age == 0) f.probe_age = 1;
      f.unanswered_age = d.below(f.probe_age);  // younger than the last probe: after it
      break;
    }
    case RuleFault::unanswered_before_ok: {
      Failure& f = some_failure(m, d);
      if (!f.ok_age) f.ok_age = d.between(f.probe_age, d.age_max);
      f.unanswered_age = d.between(*f.ok_age, kU64Max);
      break;
    }
    case RuleFault::unanswered_over: some_failure(m, d).unanswered_age = d.between(d.age_max + 1, kU64Max); break;
    case RuleFault::flaps_zero: m.flapping = {0, d.between(0, kFlapHoldMsMax)}; break;
    case RuleFault::flaps_over: m.flapping = {d.between(kFlapChangesMax + 1, kU64Max), 0}; break;
    case RuleFault::hold_over:
      m.flapping = {d.between(1, kFlapChangesMax), d.between(kFlapHoldMsMax + 1, kU64Max)};
      break;
    case RuleFault::flags_zero: m.flags = 0; break;
    case RuleFault::flags_unknown: m.flags = d.between(kReportFlagsKnown + 1, kU64Max) | (kReportFlagsKnown + 1); break;
    case RuleFault::count: break;
  }
}

void write_set(FaultWriter& w, const Bytes& bitmap, SetForm form) {
  if (form == SetForm::bitmap || bitmap.empty() || bitmap.back() == 0) {
    w.bin(bitmap);
    return;
  }
  std::vector<std::uint64_t> gaps;
  std::uint64_t previous = 0;
  for (std::size_t byte = 0; byte < bitmap.size(); ++byte) {
    for (unsigned bits = bitmap[byte]; bits != 0; bits &= bits - 1) {
      const std::uint64_t target = byte * 8 + static_cast<unsigned>(std::countr_zero(bits));
      gaps.push_back(gaps.empty() ? target : target - previous);
      previous = target;
    }
  }
  if (form == SetForm::gaps_zero) gaps.push_back(0);
  if (form == SetForm::gaps_beyond) gaps.push_back(kTargetsMax);
  w.array(static_cast<std::uint32_t>(gaps.size()));
  for (std::uint64_t gap : gaps) w.uint(gap);
}

void pack(FaultWriter& w, const Model& m, bool too_many_failures) {
  w.array(m.flags ? 4 : 3);
  w.array(m.flapping ? 5 : 3);
  w.boolean(m.listener_ok);
  w.boolean(m.service_ok);
  w.str(m.reason);
  if (m.flapping) {
    w.uint(m.flapping->first);
    w.uint(m.flapping->second);
  }
  w.array(10);
  for (std::uint64_t v : m.metrics) w.uint(v);
  w.array(m.recovered ? 6 : 5);
  w.uint(m.version);
  write_set(w, m.bitmap, m.ok_form);
  w.uint(m.ok_streak);
  w.uint(m.ok_age);
  if (too_many_failures) {
    w.array(static_cast<std::uint32_t>(kTargetsMax + 1));
    for (std::uint64_t i = 0; i <= kTargetsMax; ++i) w.nil();
    return;
  }
  w.array(static_cast<std::uint32_t>(m.failures.size()));
  for (const Failure& f : m.failures) {
    w.array(f.unanswered_age ? 6 : 5);
    w.uint(f.target);
    w.uint(f.streak);
    w.uint(f.probe_age);
    f.ok_age ? w.uint(*f.ok_age) : w.nil();
    w.uint(f.reason);
    if (f.unanswered_age) w.uint(*f.unanswered_age);
  }
  if (m.recovered) write_set(w, *m.recovered, m.recovered_form);
  if (m.flags) w.uint(*m.flags);
}

SetForm random_form(Draw& d) {
  if (!d.chance(40)) return SetForm::bitmap;
  return d.chance(90) ? SetForm::gaps : d.chance(50) ? SetForm::gaps_zero : SetForm::gaps_beyond;
}

UnixMs random_timestamp(Draw& d) {
  switch (d.below(10)) {
    case 0: return static_cast<UnixMs>(d.below(5000));
    case 1: return 0;
    case 2: return -static_cast<UnixMs>(d.between(1, 1000));
    default: return 1'700'000'000'000 + static_cast<UnixMs>(d.below(1'000'000));
  }
}

// Packs `m` with `wire` applied (the structural faults that packing makes).
Bytes pack_with(const Model& m, std::optional<WireFault> wire, Draw& d) {
  using Bad = FaultWriter::Bad;
  Bad bad = wire == WireFault::wrong_type ? Bad::wrong_type
            : wire == WireFault::too_deep ? Bad::too_deep
                                          : Bad::none;
  FaultWriter dry(d.rng, Bad::none, -1, -1);
  pack(dry, m, false);
  int bad_scalar = static_cast<int>(d.below(static_cast<std::uint64_t>(dry.scalars())));
  int miscounted = wire == WireFault::miscounted_array
                       ? static_cast<int>(d.below(static_cast<std::uint64_t>(dry.arrays())))
                       : -1;
  FaultWriter writer(d.rng, bad, bad_scalar, miscounted);
  pack(writer, m, wire == WireFault::failures_too_many);
  return writer.bytes();
}

}  // namespace

RandomReport random_report_payload(const Roster& roster, std::mt19937& rng) {
  RandomReport out;
  auto servers = static_cast<std::uint32_t>(roster.servers.size());
  out.origin_index = rng() % 20 == 0 ? servers + rng() % 3 : rng() % std::max(servers, 1u);
  bool current = rng() % 5 != 0;
  Draw d{rng, current ? servers : 1 + rng() % kTargetsMax,
         current ? std::optional<std::uint32_t>(out.origin_index) : std::nullopt, 0};
  out.record_timestamp_ms = random_timestamp(d);
  d.age_max = static_cast<std::uint64_t>(std::max<UnixMs>(out.record_timestamp_ms, 0));
  Model m = random_valid_model(d, current ? roster.version : roster.version + 1 + d.below(3));
  m.ok_form = random_form(d);
  m.recovered_form = random_form(d);
  std::uint64_t rule_faults = d.chance(40) ? 0 : d.between(1, 2);
  for (std::uint64_t i = 0; i < rule_faults; ++i) {
    auto fault = static_cast<RuleFault>(d.below(static_cast<std::uint64_t>(RuleFault::count)));
    apply_rule_fault(m, fault, d, out.origin_index);
    out.faults += std::string(kRuleFaultNames[static_cast<int>(fault)]) + " ";
  }
  std::optional<WireFault> wire;
  if (d.chance(30)) {
    wire = static_cast<WireFault>(d.below(static_cast<std::uint64_t>(WireFault::count)));
    out.faults += kWireFaultNames[static_cast<int>(*wire)];
  }
  if (wire == WireFault::bitmap_too_long) {
    m.bitmap.resize(d.between(kBitmapBytesMax + 1, kBitmapBytesMax + 100), 0);
    m.bitmap.back() = 1;
  }
  out.payload = pack_with(m, wire, d);
  if (wire == WireFault::trailing_bytes) {
    for (std::uint64_t i = d.between(1, 3); i > 0; --i) {
      out.payload.push_back(static_cast<std::uint8_t>(rng()));
    }
  } else if (wire == WireFault::truncated) {
    out.payload.resize(d.below(out.payload.size()));
  } else if (wire == WireFault::payload_too_big) {
    out.payload.resize(kPayloadBytesMax + 1 + d.below(100), 0xc0);
  }
  return out;
}

}  // namespace mesh::test

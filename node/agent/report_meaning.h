// What a node's report means to the verdict rules (docs/VERDICTS.md), as
// opposed to what it merely measures. A node publishes a new report at once
// when this changes, and otherwise only a heartbeat every
// heartbeat_interval_ms (docs/PROTOCOL.md, "When a node reports"): streak
// lengths, probe times and metrics move with every probe but change no
// verdict until a streak crosses a class boundary.
//
// Pure and small: a node holds one (what it last published) and builds one
// when something that may change it happens.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "record/report.h"

namespace mesh::agent {

// A target's result as the rules read it (VERDICTS.md rules 5 and 6): it
// gets through (fail_streak 0; the default, and so not listed), it is on its
// way to failing (a border on its way, rule 6), or it fails
// (fail_streak >= the roster's fail_streak).
enum class ResultClass : std::uint8_t { failing_on_its_way = 1, failing = 2 };

struct TargetMeaning {
  std::uint32_t target = 0;  // roster index
  ResultClass result = ResultClass::failing_on_its_way;
  ProbeFailure reason = ProbeFailure::none;
  // A failing result that is answered (record/report.h,
  // ProbeResult::unanswered_since_ms): a vote. Whether an unanswered one is
  // a silence claim or pending every node reads for itself from the
  // target's latest report (verdict/observed.h, silence_holds), and results
  // on their way are no votes either way.
  bool answered = false;
  bool operator==(const TargetMeaning&) const = default;
};

struct ReportMeaning {
  std::uint64_t roster_version = 0;  // the view's roster
  std::uint64_t epoch = 0;           // the witness plan the view was built for
  bool listener_ok = true;
  bool service_ok = true;
  std::string reason;                        // the self-check's, when it fails
  std::vector<TargetMeaning> failing;        // by target; targets with fail_streak > 0
  // The targets of the current epoch's plan the view has a result for: a
  // witness with none is missing (VERDICTS.md rule 10), so a target's first
  // result is news (a node just started, a roster just changed).
  std::vector<std::uint32_t> present;
  // Targets flagged recovered (ProbeResult::recovered): the flag is read by
  // the far-side rule (VERDICTS.md rule 6), so its end is news as well.
  std::vector<std::uint32_t> recovered;
  // The node started lately (Report::warming): who may write to the panel
  // reads it, so its end is news.
  bool warming = false;
  // The node delivers the fleet's alerts (Report::alert_sender): the others
  // drop what it has dealt with on its word, so its start and end are news.
  bool alert_sender = false;
  bool operator==(const ReportMeaning&) const = default;
};

// The meaning of a report made of `self_check` and `view`, for the witness
// plan of `epoch` in which this node's targets are `assigned` (sorted
// roster indices), with the roster's `fail_streak` parameter.
ReportMeaning meaning_of(const SelfCheck& self_check, const ProbeView& view, std::uint64_t epoch,
                         std::span<const std::uint32_t> assigned, std::uint32_t fail_streak);

// The class of a streak of `fail_streak` consecutive failures (> 0), under
// the roster's `threshold`.
inline ResultClass class_of(std::uint32_t fail_streak, std::uint32_t threshold) {
  return fail_streak >= threshold ? ResultClass::failing : ResultClass::failing_on_its_way;
}

}  // namespace mesh::agent

// The verdict engine (docs/VERDICTS.md): from the roster, each server's
// latest report and the evaluation time to an Evaluation. Pure: no clock,
// no I/O, no randomness; the same inputs in any order give the same
// Evaluation, byte for byte in to_canonical_json.
#pragma once

#include <cstdint>
#include <memory>
#include <span>

#include "record/roster.h"
#include "verdict/evaluation.h"
#include "verdict/observed.h"

namespace mesh::verdict {

// Full evaluation. `reports` may come in any order and may hold several
// reports of one origin: the latest timestamp wins (tie: supersedes()).
// Reports whose origin is outside the roster are counted in
// reports_ignored. Reports must be decoded ones (decode_report_payload);
// the engine still skips, never trusts, view entries that break the rules.
// Cost: O(servers x (countries + view size)) plus, when witnesses are
// assigned (not the full mesh), the O(servers^2) hashing of the plan(s).
Evaluation evaluate(const Roster& roster, std::span<const ObservedReport> reports,
                    UnixMs now_ms);

// Incremental evaluation, byte-identical to evaluate() over the same set of
// held reports. upsert() of a report with a view of V entries costs O(V)
// (it digests the view once: verdict/view_digest.h); evaluate() costs
// O(servers x countries) plus O(its digest) per report whose usability
// changed since the last call, plus a rebuild from the held digests when
// the epoch or the grace window changes (once or twice per epoch).
// Not thread-safe: one owner drives it. Movable, not copyable.
class Evaluator {
 public:
  explicit Evaluator(const Roster& roster);
  ~Evaluator();
  Evaluator(Evaluator&&) noexcept;
  Evaluator& operator=(Evaluator&&) noexcept;
  Evaluator(const Evaluator&) = delete;
  Evaluator& operator=(const Evaluator&) = delete;

  // Replaces the roster and drops every held report (their origin indices
  // and views refer to the old numbering); the caller upserts the reports
  // it holds again, indexed on the new roster.
  void set_roster(const Roster& roster);

  // Offers a report. Returns true when it became its origin's latest
  // (supersedes() the held one, or none was held); false when it is older
  // or its origin is outside the roster (then counted in reports_ignored).
  bool upsert(ObservedReport report);

  // The Evaluation at now_ms of the held reports.
  Evaluation evaluate(UnixMs now_ms);

  const Roster& roster() const;

 private:
  struct State;
  std::unique_ptr<State> state_;
};

}  // namespace mesh::verdict

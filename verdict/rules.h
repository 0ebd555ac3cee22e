// The verdict rules (docs/VERDICTS.md, "Rules"): from a filled Tally and
// each server's latest report to the Evaluation. Shared by the full
// evaluation and the incremental Evaluator, so both give the same bytes.
#pragma once

#include <cstdint>
#include <vector>

#include "record/roster.h"
#include "verdict/borders.h"
#include "verdict/evaluation.h"
#include "verdict/fleet.h"
#include "verdict/observed.h"
#include "verdict/tally.h"

namespace mesh::verdict {

struct RuleInputs {
  const Roster* roster = nullptr;
  const Fleet* fleet = nullptr;
  const Tally* tally = nullptr;
  // Per server (roster order): its latest report, or nullptr for none.
  const std::vector<const ObservedReport*>* latest = nullptr;
  // Unreliable observers, discarded and explained results, what votes.
  const WitnessJudgement* judgement = nullptr;
  UnixMs now_ms = 0;
  std::uint64_t epoch = 0;
  bool grace = false;
  std::uint32_t reports_ignored = 0;
};

// The status of server `target`: self-check, silence, mesh vote,
// precedence, captions and card badges.
ServerVerdict judge_server(const RuleInputs& in, std::uint32_t target);

// Route memberships from the servers' verdicts (docs/VERDICTS.md, "Routes").
std::vector<RouteMembership> route_memberships(const Roster& roster, const Fleet& fleet,
                                               const std::vector<ServerVerdict>& servers);

// The whole Evaluation. REQUIRES: every pointer of `in` non-null.
Evaluation assemble_evaluation(const RuleInputs& in);

}  // namespace mesh::verdict

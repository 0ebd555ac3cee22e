#include "verdict/engine.h"

#include <optional>
#include <utility>
#include <vector>

#include "common/check.h"
#include "verdict/borders.h"
#include "verdict/fleet.h"
#include "verdict/rules.h"
#include "verdict/tally.h"
#include "verdict/view_digest.h"
#include "verdict/witnesses.h"

namespace mesh::verdict {
namespace {

std::vector<const ObservedReport*> latest_by_origin(std::uint32_t server_count,
                                                    std::span<const ObservedReport> reports,
                                                    std::uint32_t& ignored) {
  std::vector<const ObservedReport*> latest(server_count, nullptr);
  for (const ObservedReport& report : reports) {
    if (report.origin >= server_count) {
      ++ignored;
      continue;
    }
    const ObservedReport*& held = latest[report.origin];
    if (held == nullptr || supersedes(report, *held)) held = &report;
  }
  return latest;
}

}  // namespace

Evaluation evaluate(const Roster& roster, std::span<const ObservedReport> reports,
                    UnixMs now_ms) {
  const Fleet fleet = build_fleet(roster);
  const Parameters& params = roster.params;
  const std::uint64_t epoch = epoch_of(now_ms, params, fleet.server_count);
  const bool grace = in_grace_after_switch(now_ms, params, fleet.server_count);
  const WitnessPlan current = plan_witnesses(roster, fleet, epoch);
  std::optional<WitnessPlan> previous;
  if (grace) previous = plan_witnesses(roster, fleet, epoch - 1);
  std::uint32_t ignored = 0;
  std::vector<const ObservedReport*> latest = latest_by_origin(fleet.server_count, reports, ignored);
  std::vector<UnixMs> heard_ms(fleet.server_count, 0);
  for (std::uint32_t origin = 0; origin < fleet.server_count; ++origin) {
    if (latest[origin] != nullptr) heard_ms[origin] = latest[origin]->timestamp_ms;
  }
  Tally tally(TallyContext{&fleet, &params, &current, previous ? &*previous : nullptr, &heard_ms});

  std::vector<const ObservedReport*> usable(fleet.server_count, nullptr);
  std::vector<bool> suspect(fleet.server_count, false);
  for (std::uint32_t origin = 0; origin < fleet.server_count; ++origin) {
    const ObservedReport* report = latest[origin];
    if (report == nullptr || !view_usable(*report, now_ms, roster)) continue;
    usable[origin] = report;
    ViewShare share;
    tally.contribute(+1, digest_view(*report, params, fleet), &share);
    suspect[origin] = share.reaches(params, strained_permille(params));
  }
  const WitnessJudgement judged = judge_witnesses(tally, usable, suspect);
  return assemble_evaluation(
      RuleInputs{&roster, &fleet, &tally, &latest, &judged, now_ms, epoch, grace, ignored});
}

// ---- Evaluator ----

struct Evaluator::State {
  struct Held {
    std::optional<ObservedReport> report;
    ViewDigest digest;          // of report, against the roster (made once, at upsert)
    bool suspect = false;       // fails_share(report, strained), read when its votes are added
    bool contributing = false;  // its votes are in the tally
  };

  Roster roster;
  Fleet fleet;
  std::optional<WitnessPlan> current;   // plan of tally_epoch
  std::optional<WitnessPlan> previous;  // plan of tally_epoch - 1, when needed
  std::optional<Tally> tally;           // points into the members above
  std::uint64_t tally_epoch = 0;
  bool tally_grace = false;
  std::vector<Held> held;
  std::vector<UnixMs> heard_ms;  // by server: its held report's timestamp (TallyContext::heard_ms)
  std::uint32_t ignored = 0;

  void withdraw(const Held& entry) { tally->contribute(-1, entry.digest); }

  void reset(const Roster& new_roster) {
    tally.reset();
    roster = new_roster;
    fleet = build_fleet(roster);
    current.reset();
    previous.reset();
    held.assign(fleet.server_count, Held{});
    heard_ms.assign(fleet.server_count, 0);
    ignored = 0;
  }

  // The latest report of `origin` is now dated `timestamp_ms`: the silence
  // claims against it are taken out of the tally and put back judged anew.
  void set_heard(std::uint32_t origin, UnixMs timestamp_ms) {
    if (heard_ms[origin] == timestamp_ms) return;
    if (!tally) {
      heard_ms[origin] = timestamp_ms;
      return;
    }
    const std::vector<std::uint32_t> claimants = tally->silent_claimants(origin);
    for (std::uint32_t observer : claimants) withdraw(held[observer]);
    heard_ms[origin] = timestamp_ms;
    for (std::uint32_t observer : claimants) tally->contribute(+1, held[observer].digest);
  }

  void ensure_plans(std::uint64_t epoch, bool grace) {
    MESH_CHECK(!tally.has_value(), "plans replaced under a live tally");
    if (!current || current->epoch != epoch) {
      if (current && current->epoch + 1 == epoch) {
        previous = std::move(current);
      }
      current = plan_witnesses(roster, fleet, epoch);
    }
    if (grace && (!previous || previous->epoch + 1 != epoch)) {
      previous = plan_witnesses(roster, fleet, epoch - 1);
    }
  }

  void rebuild(std::uint64_t epoch, bool grace) {
    tally.reset();
    ensure_plans(epoch, grace);
    tally.emplace(TallyContext{&fleet, &roster.params, &*current, grace ? &*previous : nullptr, &heard_ms});
    tally_epoch = epoch;
    tally_grace = grace;
    for (Held& entry : held) entry.contributing = false;
  }

  // Brings every origin's contribution in line with its usability at now_ms.
  void sync_contributions(UnixMs now_ms) {
    for (Held& entry : held) {
      bool usable = entry.report && view_usable(*entry.report, now_ms, roster);
      if (usable == entry.contributing) continue;
      entry.contributing = usable;
      if (!usable) {
        withdraw(entry);
        continue;
      }
      ViewShare share;
      tally->contribute(+1, entry.digest, &share);
      entry.suspect = share.reaches(roster.params, strained_permille(roster.params));
    }
  }
};

Evaluator::Evaluator(const Roster& roster) : state_(std::make_unique<State>()) {
  state_->reset(roster);
}
Evaluator::~Evaluator() = default;
Evaluator::Evaluator(Evaluator&&) noexcept = default;
Evaluator& Evaluator::operator=(Evaluator&&) noexcept = default;

void Evaluator::set_roster(const Roster& roster) { state_->reset(roster); }

const Roster& Evaluator::roster() const { return state_->roster; }

bool Evaluator::upsert(ObservedReport report) {
  State& state = *state_;
  if (report.origin >= state.fleet.server_count) {
    ++state.ignored;
    return false;
  }
  State::Held& entry = state.held[report.origin];
  if (entry.report && !supersedes(report, *entry.report)) return false;
  if (entry.contributing) {
    state.withdraw(entry);
    entry.contributing = false;
  }
  const UnixMs timestamp_ms = report.timestamp_ms;
  const std::uint32_t origin = report.origin;
  entry.report = std::move(report);
  entry.digest = digest_view(*entry.report, state.roster.params, state.fleet);
  state.set_heard(origin, timestamp_ms);
  return true;
}

Evaluation Evaluator::evaluate(UnixMs now_ms) {
  State& state = *state_;
  const Parameters& params = state.roster.params;
  const std::uint64_t epoch = epoch_of(now_ms, params, state.fleet.server_count);
  const bool grace = in_grace_after_switch(now_ms, params, state.fleet.server_count);
  if (!state.tally || state.tally_epoch != epoch || state.tally_grace != grace) {
    state.rebuild(epoch, grace);
  }
  state.sync_contributions(now_ms);

  std::vector<const ObservedReport*> latest(state.fleet.server_count, nullptr);
  std::vector<const ObservedReport*> usable(state.fleet.server_count, nullptr);
  std::vector<bool> suspect(state.fleet.server_count, false);
  for (std::uint32_t origin = 0; origin < state.fleet.server_count; ++origin) {
    const State::Held& entry = state.held[origin];
    if (entry.report) latest[origin] = &*entry.report;
    if (entry.contributing) usable[origin] = &*entry.report;
    suspect[origin] = entry.contributing && entry.suspect;
  }
  const WitnessJudgement judged = judge_witnesses(*state.tally, usable, suspect);
  return assemble_evaluation(RuleInputs{&state.roster, &state.fleet, &*state.tally, &latest,
                                        &judged, now_ms, epoch, grace, state.ignored});
}

}  // namespace mesh::verdict

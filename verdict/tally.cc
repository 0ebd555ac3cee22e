#include "verdict/tally.h"

#include <algorithm>

#include "common/check.h"

namespace mesh::verdict {

Tally::Tally(const TallyContext& context) : context_(context) {
  MESH_CHECK(context.fleet && context.params && context.current, "incomplete TallyContext");
  countries_ = static_cast<std::uint32_t>(context.fleet->countries.size());
  servers_ = context.fleet->server_count;
  std::size_t cells = static_cast<std::size_t>(context.fleet->server_count) * countries_;
  reporting_.assign(cells, 0);
  failing_.assign(cells, 0);
  succeeding_.assign(cells, 0);
  recovering_.assign(cells, 0);
  present_.assign(cells, 0);
  assigned_.assign(cells, 0);
  streak_observers_.assign(context.fleet->server_count, {});
  through_.assign(cells, 0);
  silent_claims_.assign(context.fleet->server_count, 0);
  silent_claimants_.assign(context.fleet->server_count, {});
  count_assigned();
}

bool Tally::silence_held(const ProbeResult& result) const {
  const UnixMs heard = context_.heard_ms != nullptr ? (*context_.heard_ms)[result.target] : 0;
  return silence_holds(result, heard);
}

bool Tally::votes(const ProbeResult& result) const {
  const UnixMs heard = context_.heard_ms != nullptr ? (*context_.heard_ms)[result.target] : 0;
  return is_vote(result, *context_.params, heard);
}

namespace {

void add_or_remove(std::vector<std::uint32_t>& observers, std::uint32_t origin, int sign) {
  if (sign > 0) {
    observers.push_back(origin);
    return;
  }
  auto it = std::find(observers.begin(), observers.end(), origin);
  MESH_CHECK(it != observers.end(), "tally: removal of a result never added");
  *it = observers.back();
  observers.pop_back();
}

}  // namespace

void Tally::count_assigned() {
  const Fleet& fleet = *context_.fleet;
  for (std::uint32_t t = 0; t < fleet.server_count; ++t) {
    if (context_.current->full_mesh) {
      for (std::uint32_t c = 0; c < countries_; ++c) {
        auto size = static_cast<std::int32_t>(fleet.members_of_country[c].size());
        assigned_[cell(t, c)] = size - (fleet.country_of[t] == c ? 1 : 0);
      }
    } else {
      for (std::uint32_t w : context_.current->witnesses_of_target[t]) {
        ++assigned_[cell(t, fleet.country_of[w])];
      }
    }
  }
}

void Tally::contribute(int sign, const ViewDigest& digest, ViewShare* share) {
  MESH_CHECK(sign == 1 || sign == -1, "contribute(): sign must be +1 or -1");
  const Fleet& fleet = *context_.fleet;
  const std::uint32_t origin = digest.origin;
  MESH_CHECK(origin < fleet.server_count, "contribute(): origin outside the roster");
  const std::uint32_t country = fleet.country_of[origin];
  const WitnessPlan& plan = *context_.current;
  const WitnessPlan* previous = context_.previous;
  // The arrays and the plan's shape are held in locals (the compiler
  // cannot keep members in registers across the stores); the cells are
  // [country][target], so a view adds to one row of each array.
  const std::uint32_t* const country_of = fleet.country_of.data();
  std::int32_t* const present = present_.data();
  std::int32_t* const reporting = reporting_.data();
  std::int32_t* const succeeding = succeeding_.data();
  std::int32_t* const recovering = recovering_.data();
  std::int32_t* const failing = failing_.data();
  std::int32_t* const through_row = through_.data() + static_cast<std::size_t>(origin) * countries_;
  const std::size_t column = cell(0, country);
  const bool full_mesh = plan.full_mesh;
  // is_vote() of a result that gets through: only with fail_streak = 0 set.
  const bool success_votes = context_.params->fail_streak == 0;

  // Plain results (view_digest.h): what one adds depends on its target
  // alone. In the full mesh every counted result is a current witness's (it
  // never names the origin or a server outside the roster), so a run adds
  // to a stretch of each row (this is almost the whole of a full
  // evaluation at 3000 servers, and it vectorises), and every plain result
  // gets through to its country.
  if (full_mesh) {
    MESH_CHECK(digest.plain_in_country.size() == countries_, "contribute(): a digest of another fleet");
    for (std::uint32_t c = 0; c < countries_; ++c) {
      through_row[c] += sign * static_cast<std::int32_t>(digest.plain_in_country[c]);
    }
  }
  for (const PlainRun& run : digest.plain) {
    // In locals: an int32 store may alias the run's uint32 fields, which
    // would keep the loops below from vectorising.
    const std::uint32_t first = run.first_target;
    const std::uint32_t count = run.count;
    if (share != nullptr) share->probed += count;
    if (full_mesh) {
      std::int32_t* const row_present = present + column + first;
      std::int32_t* const row_reporting = reporting + column + first;
      std::int32_t* const row_succeeding = succeeding + column + first;
      for (std::uint32_t i = 0; i < count; ++i) row_present[i] += sign;
      for (std::uint32_t i = 0; i < count; ++i) row_reporting[i] += sign;
      for (std::uint32_t i = 0; i < count; ++i) row_succeeding[i] += sign;
      if (success_votes) {
        std::int32_t* const row_failing = failing + column + first;
        for (std::uint32_t i = 0; i < count; ++i) row_failing[i] += sign;
      }
      continue;
    }
    const std::uint32_t end = first + count;
    for (std::uint32_t target = first; target < end; ++target) {
      const bool current = plan.is_witness(origin, target);
      if (!current && (previous == nullptr || !previous->is_witness(origin, target))) continue;
      const std::size_t at = column + target;
      present[at] += current ? sign : 0;
      reporting[at] += sign;
      succeeding[at] += sign;
      through_row[country_of[target]] += sign;
      if (success_votes) failing[at] += sign;
    }
  }

  for (const ProbeResult& result : digest.other) {
    if (share != nullptr) share->count(result);
    const std::uint32_t target = result.target;
    const bool current = full_mesh || plan.is_witness(origin, target);
    if (!current && (previous == nullptr || !previous->is_witness(origin, target))) continue;
    const std::size_t at = column + target;
    present[at] += current ? sign : 0;
    reporting[at] += sign;
    if (result.fail_streak == 0) {
      succeeding[at] += sign;
      if (result.recovered) {
        recovering[at] += sign;
      } else {
        through_row[country_of[target]] += sign;
      }
      if (success_votes && votes(result)) failing[at] += sign;
      continue;
    }
    add_or_remove(streak_observers_[target], origin, sign);
    if (result.unanswered_since_ms != 0) {
      add_or_remove(silent_claimants_[target], origin, sign);
      if (silence_held(result)) silent_claims_[target] += sign;
    }
    if (votes(result)) failing[at] += sign;
  }
}

}  // namespace mesh::verdict

#include "verdict/tally.h"

#include "common/check.h"

namespace mesh::verdict {
namespace {

std::uint32_t non_negative(std::int32_t count) {
  MESH_CHECK(count >= 0, "tally count below zero: a removal without its addition");
  return static_cast<std::uint32_t>(count);
}

}  // namespace

Tally::Tally(const TallyContext& context) : context_(context) {
  MESH_CHECK(context.fleet && context.params && context.current, "incomplete TallyContext");
  countries_ = static_cast<std::uint32_t>(context.fleet->countries.size());
  std::size_t cells = static_cast<std::size_t>(context.fleet->server_count) * countries_;
  eligible_.assign(cells, 0);
  failing_.assign(cells, 0);
  present_.assign(cells, 0);
  assigned_.assign(cells, 0);
  discarded_.assign(context.fleet->server_count, 0);
  count_assigned();
}

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

void Tally::contribute(int sign, const ObservedReport& observed, bool unreliable) {
  MESH_CHECK(sign == 1 || sign == -1, "contribute(): sign must be +1 or -1");
  const Fleet& fleet = *context_.fleet;
  const Parameters& params = *context_.params;
  const std::uint32_t origin = observed.origin;
  MESH_CHECK(origin < fleet.server_count, "contribute(): origin outside the roster");
  const std::uint32_t country = fleet.country_of[origin];
  for_each_counted_result(observed, params, fleet.server_count, [&](const ProbeResult& result) {
    const std::uint32_t target = result.target;
    bool current = context_.current->is_witness(origin, target);
    bool grace = !current && context_.previous != nullptr &&
                 context_.previous->is_witness(origin, target);
    if (!current && !grace) return;
    const std::size_t at = cell(target, country);
    if (current) present_[at] += sign;
    if (unreliable) {
      discarded_[target] += sign;
      return;
    }
    eligible_[at] += sign;
    if (is_failing(result, params)) failing_[at] += sign;
  });
}

std::uint32_t Tally::eligible(std::uint32_t target, std::uint32_t country) const {
  return non_negative(eligible_[cell(target, country)]);
}

std::uint32_t Tally::failing(std::uint32_t target, std::uint32_t country) const {
  return non_negative(failing_[cell(target, country)]);
}

std::uint32_t Tally::assigned(std::uint32_t target, std::uint32_t country) const {
  return non_negative(assigned_[cell(target, country)]);
}

std::uint32_t Tally::missing(std::uint32_t target, std::uint32_t country) const {
  std::int32_t missing = assigned_[cell(target, country)] - present_[cell(target, country)];
  MESH_CHECK(missing >= 0, "more present witnesses than assigned");
  return static_cast<std::uint32_t>(missing);
}

std::uint32_t Tally::discarded(std::uint32_t target) const {
  return non_negative(discarded_[target]);
}

}  // namespace mesh::verdict

// Witness plans for the agent's probe targets (verdict/witnesses.h). A plan
// costs O(servers^2) hashes, so it is made once per (roster, epoch) and
// shared: PlanCache keeps the few one node needs; a simulator hands all its
// nodes one shared source, since a plan is a pure function of its inputs.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "record/roster.h"
#include "verdict/witnesses.h"

namespace mesh::agent {

class PlanSource {
 public:
  virtual ~PlanSource() = default;
  // The plan of `roster` for `epoch`: plan_witnesses(*roster, epoch).
  // `roster` is immutable; a source may key on its address while it holds
  // the pointer (a new roster is always a new object).
  virtual std::shared_ptr<const verdict::WitnessPlan> plan(
      const std::shared_ptr<const Roster>& roster, std::uint64_t epoch) = 0;
};

// Keeps the last kPlansMax plans (current and next epoch, and one spare).
class PlanCache final : public PlanSource {
 public:
  static constexpr std::size_t kPlansMax = 3;

  std::shared_ptr<const verdict::WitnessPlan> plan(const std::shared_ptr<const Roster>& roster,
                                                   std::uint64_t epoch) override;
  std::uint64_t made() const { return made_; }

 private:
  struct Entry {
    std::shared_ptr<const Roster> roster;
    std::uint64_t epoch = 0;
    std::shared_ptr<const verdict::WitnessPlan> plan;
  };
  std::vector<Entry> entries_;  // most recently made last
  std::uint64_t made_ = 0;
};

}  // namespace mesh::agent

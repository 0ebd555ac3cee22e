#include "node/agent/plans.h"

namespace mesh::agent {

std::shared_ptr<const verdict::WitnessPlan> PlanCache::plan(
    const std::shared_ptr<const Roster>& roster, std::uint64_t epoch) {
  for (const Entry& entry : entries_) {
    if (entry.roster == roster && entry.epoch == epoch) return entry.plan;
  }
  ++made_;
  auto made = std::make_shared<const verdict::WitnessPlan>(verdict::plan_witnesses(*roster, epoch));
  if (entries_.size() >= kPlansMax) entries_.erase(entries_.begin());
  entries_.push_back(Entry{roster, epoch, made});
  return made;
}

}  // namespace mesh::agent

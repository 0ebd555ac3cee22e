#include "node/standing_problems.h"

#include <algorithm>

namespace mesh::node {

bool StandingProblems::set(const std::string& code, std::optional<std::string> message) {
  auto it = std::find_if(entries_.begin(), entries_.end(), [&](const Entry& e) { return e.problem.code == code; });
  if (!message) {
    if (it == entries_.end()) return false;
    entries_.erase(it);
    return true;
  }
  if (it == entries_.end()) {
    entries_.push_back({api::HealthProblem{code, std::move(*message)}, std::nullopt});
    return true;
  }
  if (it->problem.message == *message) return false;
  it->problem.message = std::move(*message);
  it->logged_ms.reset();
  return true;
}

std::vector<api::HealthProblem> StandingProblems::due(UnixMs now) {
  std::vector<api::HealthProblem> out;
  for (Entry& entry : entries_) {
    // A clock stepped back (now before the last log) counts as due too.
    if (entry.logged_ms && now >= *entry.logged_ms && now - *entry.logged_ms < repeat_ms_) continue;
    entry.logged_ms = now;
    out.push_back(entry.problem);
  }
  return out;
}

std::vector<api::HealthProblem> StandingProblems::all() const {
  std::vector<api::HealthProblem> out;
  for (const Entry& entry : entries_) out.push_back(entry.problem);
  return out;
}

}  // namespace mesh::node

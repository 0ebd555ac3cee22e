// The problems that stand while a node runs (a roster file refused, this
// node missing from the roster held, or listed with another key), and when
// each is logged: at once when it appears or changes, then again every
// `repeat_ms` while it stands, so a node that cannot do its whole job
// never goes quiet about it (docs/API.md, "GET /healthz"). Pure: time is
// an argument. One strand owns it.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "common/time.h"
#include "node/api/snapshot.h"

namespace mesh::node {

class StandingProblems {
 public:
  explicit StandingProblems(DurationMs repeat_ms) : repeat_ms_(repeat_ms) {}

  // Sets the problem `code` to `message`, or clears it (nullopt). True when
  // that changed what stands.
  bool set(const std::string& code, std::optional<std::string> message);

  // The problems to log at `now`: each new or changed one, and each logged
  // repeat_ms or more before. Marks them logged at `now`.
  std::vector<api::HealthProblem> due(UnixMs now);

  // Every problem that stands, in the order they first appeared.
  std::vector<api::HealthProblem> all() const;
  bool empty() const { return entries_.empty(); }

 private:
  struct Entry {
    api::HealthProblem problem;
    std::optional<UnixMs> logged_ms;  // nullopt: not logged since it appeared or changed
  };
  DurationMs repeat_ms_;
  std::vector<Entry> entries_;
};

}  // namespace mesh::node

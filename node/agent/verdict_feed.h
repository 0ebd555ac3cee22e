// Feeds the reports the gossip core holds into the incremental verdict
// Evaluator (verdict/engine.h), only those that changed (the core says
// which: gossip::Effects::reports_changed), and tells a new verdict
// snapshot from the previous one. Pure; the agent owns it.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <vector>

#include "gossip/core.h"
#include "verdict/engine.h"

namespace mesh::agent {

// True when `a` and `b` show the same thing to an operator: every server's
// status, flags, caption, counts, split by country and badges, every
// route's members and degradation, the unreliable observers and the roster
// version. Evaluation time, epoch and report ages are not compared.
bool same_verdicts(const verdict::Evaluation& a, const verdict::Evaluation& b);

class VerdictFeed {
 public:
  // The reports of these roster indices changed in the core.
  void reports_changed(const std::vector<std::uint32_t>& indices);
  // Every report is to be read again (a new roster).
  void roster_changed() { all_dirty_ = true; }
  bool dirty() const { return all_dirty_ || !dirty_.empty(); }

  // The Evaluation at now_ms of the reports `core` holds.
  // REQUIRES: core holds a roster and decoded reports (hold_decoded_reports).
  verdict::Evaluation evaluate(const gossip::GossipCore& core, UnixMs now_ms);

 private:
  std::shared_ptr<const Roster> roster_;  // the Evaluator's
  std::optional<verdict::Evaluator> evaluator_;
  // Per roster index: the report upserted, as (seq, first 8 signature
  // bytes): equal seqs of an equivocating origin still tell apart.
  std::vector<std::pair<std::uint64_t, std::uint64_t>> fed_;
  std::vector<std::uint32_t> dirty_;
  bool all_dirty_ = true;
};

}  // namespace mesh::agent

#include "node/agent/verdict_feed.h"

#include <cstring>

#include "common/check.h"

namespace mesh::agent {
namespace {

bool same_server(const verdict::ServerVerdict& a, const verdict::ServerVerdict& b) {
  return a.id == b.id && a.status == b.status && a.flags == b.flags && a.caption == b.caption &&
         a.failing == b.failing && a.eligible == b.eligible && a.quorum == b.quorum &&
         a.by_country == b.by_country && a.self_check_reason == b.self_check_reason &&
         a.badges == b.badges;
}

}  // namespace

bool same_verdicts(const verdict::Evaluation& a, const verdict::Evaluation& b) {
  if (a.roster_version != b.roster_version || a.servers.size() != b.servers.size() ||
      a.routes != b.routes || a.unreliable_observers != b.unreliable_observers ||
      a.partitioned != b.partitioned) {
    return false;
  }
  for (std::size_t i = 0; i < a.servers.size(); ++i) {
    if (!same_server(a.servers[i], b.servers[i])) return false;
  }
  return true;
}

void VerdictFeed::reports_changed(const std::vector<std::uint32_t>& indices) {
  if (all_dirty_) return;
  dirty_.insert(dirty_.end(), indices.begin(), indices.end());
}

verdict::Evaluation VerdictFeed::evaluate(const gossip::GossipCore& core, UnixMs now_ms) {
  std::shared_ptr<const Roster> roster = core.shared_roster();
  MESH_CHECK(roster != nullptr, "VerdictFeed::evaluate without a roster");
  if (roster != roster_) {
    roster_ = roster;
    evaluator_.emplace(*roster);
    fed_.assign(roster->servers.size(), {0, 0});
    all_dirty_ = true;
  }
  auto feed = [&](std::uint32_t index) {
    if (index >= fed_.size()) return;
    auto held = core.report_of(index);
    if (!held) return;
    std::uint64_t signature_prefix = 0;
    std::memcpy(&signature_prefix, held->envelope->signature.data(), sizeof signature_prefix);
    const std::pair<std::uint64_t, std::uint64_t> key{held->envelope->seq, signature_prefix};
    if (key == fed_[index]) return;
    MESH_CHECK(held->report != nullptr, "VerdictFeed needs decoded reports");
    evaluator_->upsert(verdict::ObservedReport{index, held->envelope->timestamp_ms, *held->report});
    fed_[index] = key;
  };
  if (all_dirty_) {
    for (std::uint32_t i = 0; i < fed_.size(); ++i) feed(i);
  } else {
    for (std::uint32_t index : dirty_) feed(index);
  }
  all_dirty_ = false;
  dirty_.clear();
  return evaluator_->evaluate(now_ms);
}

}  // namespace mesh::agent

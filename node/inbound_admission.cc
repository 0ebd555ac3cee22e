// Which accepted gossip connections the transport keeps (node/inbound_admission.h).
#include "node/inbound_admission.h"

namespace mesh::node {

InboundSource inbound_source_v4(std::uint32_t host_order) {
  InboundSource out{};
  out[10] = 0xff;
  out[11] = 0xff;
  for (int i = 0; i < 4; ++i) out[12 + i] = static_cast<std::uint8_t>(host_order >> (24 - 8 * i));
  return out;
}

InboundSource inbound_source_v6(const std::array<std::uint8_t, 16>& address) {
  InboundSource out{};
  for (int i = 0; i < 8; ++i) out[i] = address[i];
  // An IPv4-mapped IPv6 address is that IPv4 host, not a /64.
  const bool mapped = out == InboundSource{0, 0, 0, 0, 0, 0, 0, 0} && address[8] == 0 && address[9] == 0 &&
                      address[10] == 0xff && address[11] == 0xff;
  if (mapped) return address;
  return out;
}

std::optional<std::uint64_t> InboundAdmission::first_of(const SourceQueues& queues) {
  if (!queues.silent.empty()) return queues.silent.begin()->second;
  if (!queues.heard.empty()) return queues.heard.begin()->second;
  return std::nullopt;
}

std::size_t InboundAdmission::unauthenticated_count() const {
  std::size_t count = 0;
  for (const auto& [level, queues] : levels_) count += queues.size();
  return count;
}

void InboundAdmission::relevel(const SourceQueues& source, std::size_t from, std::size_t to) {
  if (from > 0) {
    auto level = levels_.find(from);
    for (const auto& key : source.silent) level->second.silent.erase(key);
    for (const auto& key : source.heard) level->second.heard.erase(key);
    if (level->second.size() == 0) levels_.erase(level);
  }
  if (to > 0) {
    SourceQueues& level = levels_[to];
    level.silent.insert(source.silent.begin(), source.silent.end());
    level.heard.insert(source.heard.begin(), source.heard.end());
  }
}

InboundDecision InboundAdmission::admit(std::uint64_t id, const InboundSource& from) {
  InboundDecision decision;
  auto source = sources_.find(from);
  if (source != sources_.end() && source->second.size() >= limits_.unauthenticated_per_source_max) {
    decision.outcome = InboundDecision::Outcome::admitted_source_full;
    decision.evict = first_of(source->second);
  } else if (entries_.size() >= limits_.connections_max) {
    if (!levels_.empty()) decision.evict = first_of(levels_.rbegin()->second);
    decision.outcome = decision.evict ? InboundDecision::Outcome::admitted_table_full
                                      : InboundDecision::Outcome::refused;
  }
  if (!decision.admitted()) return decision;
  if (decision.evict) forget(*decision.evict);
  const std::uint64_t arrival = ++arrivals_;
  entries_[id] = Entry{from, arrival, false, false};
  SourceQueues& queues = sources_[from];
  const std::size_t count = queues.size();
  relevel(queues, count, 0);
  queues.silent.emplace(arrival, id);
  relevel(queues, 0, count + 1);
  return decision;
}

void InboundAdmission::heard(std::uint64_t id) {
  auto it = entries_.find(id);
  if (it == entries_.end() || it->second.heard || it->second.authenticated) return;
  Entry& entry = it->second;
  entry.heard = true;
  SourceQueues& source = sources_[entry.source];
  SourceQueues& level = levels_[source.size()];
  source.silent.erase({entry.arrival, id});
  source.heard.emplace(entry.arrival, id);
  level.silent.erase({entry.arrival, id});
  level.heard.emplace(entry.arrival, id);
}

void InboundAdmission::authenticated(std::uint64_t id) {
  auto it = entries_.find(id);
  if (it == entries_.end() || it->second.authenticated) return;
  const Entry entry = it->second;
  forget(id);
  entries_[id] = Entry{entry.source, entry.arrival, true, true};
}

void InboundAdmission::closed(std::uint64_t id) { forget(id); }

void InboundAdmission::forget(std::uint64_t id) {
  auto it = entries_.find(id);
  if (it == entries_.end()) return;
  const Entry entry = it->second;
  entries_.erase(it);
  if (entry.authenticated) return;
  auto source = sources_.find(entry.source);
  if (source == sources_.end()) return;
  const std::size_t count = source->second.size();
  relevel(source->second, count, 0);
  const std::pair<std::uint64_t, std::uint64_t> key{entry.arrival, id};
  (entry.heard ? source->second.heard : source->second.silent).erase(key);
  relevel(source->second, 0, count - 1);
  if (source->second.size() == 0) sources_.erase(source);
}

}  // namespace mesh::node

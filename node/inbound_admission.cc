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

std::optional<std::uint64_t> InboundAdmission::first_of(const Queue& silent, const Queue& heard) {
  if (!silent.empty()) return silent.begin()->second;
  if (!heard.empty()) return heard.begin()->second;
  return std::nullopt;
}

InboundDecision InboundAdmission::admit(std::uint64_t id, const InboundSource& from) {
  InboundDecision decision;
  auto source = sources_.find(from);
  if (source != sources_.end() && source->second.size() >= limits_.unauthenticated_per_source_max) {
    decision.outcome = InboundDecision::Outcome::admitted_source_full;
    decision.evict = first_of(source->second.silent, source->second.heard);
  } else if (entries_.size() >= limits_.connections_max) {
    decision.evict = first_of(silent_, heard_);
    decision.outcome = decision.evict ? InboundDecision::Outcome::admitted_table_full
                                      : InboundDecision::Outcome::refused;
  }
  if (!decision.admitted()) return decision;
  if (decision.evict) forget(*decision.evict);
  const std::uint64_t arrival = ++arrivals_;
  entries_[id] = Entry{from, arrival, false, false};
  sources_[from].silent.emplace(arrival, id);
  silent_.emplace(arrival, id);
  return decision;
}

void InboundAdmission::heard(std::uint64_t id) {
  auto it = entries_.find(id);
  if (it == entries_.end() || it->second.heard || it->second.authenticated) return;
  Entry& entry = it->second;
  entry.heard = true;
  SourceQueues& source = sources_[entry.source];
  source.silent.erase({entry.arrival, id});
  source.heard.emplace(entry.arrival, id);
  silent_.erase({entry.arrival, id});
  heard_.emplace(entry.arrival, id);
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
  const std::pair<std::uint64_t, std::uint64_t> key{entry.arrival, id};
  (entry.heard ? heard_ : silent_).erase(key);
  auto source = sources_.find(entry.source);
  if (source == sources_.end()) return;
  (entry.heard ? source->second.heard : source->second.silent).erase(key);
  if (source->second.size() == 0) sources_.erase(source);
}

}  // namespace mesh::node

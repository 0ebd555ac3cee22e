#include "node/api/admission.h"

#include <algorithm>

namespace mesh::api {

SourceAddress SourceAddress::v4(std::uint32_t host_order) {
  SourceAddress out;
  out.bytes[10] = 0xff;
  out.bytes[11] = 0xff;
  for (int i = 0; i < 4; ++i) out.bytes[12 + i] = static_cast<std::uint8_t>(host_order >> (24 - 8 * i));
  return out;
}

SourceAddress SourceAddress::v6(const std::array<std::uint8_t, 16>& bytes) {
  SourceAddress out;
  out.bytes = bytes;
  return out;
}

bool SourceAddress::is_v4() const {
  return std::all_of(bytes.begin(), bytes.begin() + 10, [](std::uint8_t b) { return b == 0; }) &&
         bytes[10] == 0xff && bytes[11] == 0xff;
}

SourceAddress SourceAddress::network() const {
  SourceAddress out = *this;
  // IPv4: the /24 (the last byte); IPv6: the /64 (the last 8 bytes).
  const std::size_t host_from = is_v4() ? 15 : 8;
  std::fill(out.bytes.begin() + static_cast<std::ptrdiff_t>(host_from), out.bytes.end(), 0);
  return out;
}

AdmitDecision Admission::admit(const SourceAddress& from) {
  AdmitDecision decision;
  if (auto it = addresses_.find(from); it != addresses_.end() && it->second.connections >= limits_.per_address_max) {
    decision.outcome = AdmitDecision::Outcome::address_full;
    return decision;
  }
  if (entries_.size() >= limits_.connections_max) {
    const auto candidate = eviction_candidate();
    if (!candidate || !gives_way(*candidate, from)) {
      decision.outcome = AdmitDecision::Outcome::server_full;
      return decision;
    }
    decision.evict = candidate->id;
    close(candidate->id);
  }
  decision.id = next_id_++;
  const std::uint64_t since = events_++;
  entries_.emplace(decision.id, Entry{from, since, false});
  AddressState& state = addresses_[from];
  ++state.connections;
  state.untrusted.emplace(since, decision.id);
  ++untrusted_per_network_[from.network()];
  return decision;
}

void Admission::trust(ConnectionId id) {
  auto it = entries_.find(id);
  if (it == entries_.end() || it->second.trusted) return;
  forget_untrusted(it->second, id);
  it->second.trusted = true;
  ++trusted_;
}

void Admission::waiting(ConnectionId id) {
  auto it = entries_.find(id);
  if (it == entries_.end() || it->second.trusted) return;
  AddressState& state = addresses_[it->second.address];
  state.untrusted.erase({it->second.since, id});
  it->second.since = events_++;
  state.untrusted.emplace(it->second.since, id);
}

void Admission::close(ConnectionId id) {
  auto it = entries_.find(id);
  if (it == entries_.end()) return;
  const Entry entry = it->second;
  entries_.erase(it);
  if (entry.trusted) {
    --trusted_;
  } else {
    forget_untrusted(entry, id);
  }
  auto address = addresses_.find(entry.address);
  if (--address->second.connections == 0) addresses_.erase(address);
}

void Admission::forget_untrusted(const Entry& entry, ConnectionId id) {
  addresses_[entry.address].untrusted.erase({entry.since, id});
  auto network = untrusted_per_network_.find(entry.address.network());
  if (--network->second == 0) untrusted_per_network_.erase(network);
}

Admission::Greed Admission::greed_of(const SourceAddress& address) const {
  Greed greed{0, 0};
  if (auto network = untrusted_per_network_.find(address.network()); network != untrusted_per_network_.end()) {
    greed.first = network->second;
  }
  if (auto state = addresses_.find(address); state != addresses_.end()) greed.second = state->second.untrusted.size();
  return greed;
}

bool Admission::gives_way(const Candidate& candidate, const SourceAddress& from) const {
  const Greed newcomer = greed_of(from);
  if (newcomer.second == 0) return true;
  const bool same_network = candidate.address.network() == from.network();
  const std::size_t theirs = same_network ? candidate.greed.second : candidate.greed.first;
  const std::size_t ours = same_network ? newcomer.second : newcomer.first;
  return theirs >= ours + 2;
}

std::optional<Admission::Candidate> Admission::eviction_candidate() const {
  // The greediest address; among equals, the one whose oldest waiter has
  // waited longest.
  const SourceAddress* chosen = nullptr;
  Greed chosen_greed{0, 0};
  std::uint64_t chosen_since = 0;
  for (const auto& [address, state] : addresses_) {
    if (state.untrusted.empty()) continue;
    const Greed greed = greed_of(address);
    const std::uint64_t since = state.untrusted.begin()->first;
    if (chosen == nullptr || greed > chosen_greed || (greed == chosen_greed && since < chosen_since)) {
      chosen = &address;
      chosen_greed = greed;
      chosen_since = since;
    }
  }
  if (chosen == nullptr) return std::nullopt;
  return Candidate{addresses_.at(*chosen).untrusted.begin()->second, *chosen, chosen_greed};
}

}  // namespace mesh::api

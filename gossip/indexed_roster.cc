#include "gossip/indexed_roster.h"

#include <algorithm>
#include <utility>

namespace mesh::gossip {
namespace {

// FNV-1a, 64 bits: ids are short printable strings; the tag only narrows the
// candidates, a hit is always confirmed against the roster's id.
std::uint64_t id_hash(std::string_view id) {
  std::uint64_t h = 0xcbf29ce484222325ull;
  for (char c : id) h = (h ^ static_cast<std::uint8_t>(c)) * 0x100000001b3ull;
  return h ^ (h >> 29);
}

}  // namespace

void MemberIndex::build(const Roster& roster) {
  std::size_t size = 16;
  while (size < roster.servers.size() * 2) size *= 2;
  slots_.assign(size, 0);
  mask_ = size - 1;
  for (std::uint32_t i = 0; i < roster.servers.size(); ++i) {
    const std::uint64_t h = id_hash(roster.servers[i].id);
    std::size_t at = h & mask_;
    while (slots_[at] != 0) at = (at + 1) & mask_;
    slots_[at] = (h >> 32 << 32) | (std::uint64_t{i} + 1);
  }
}

std::optional<std::uint32_t> MemberIndex::find(const Roster& roster, std::string_view id) const {
  if (slots_.empty()) return std::nullopt;
  const std::uint64_t h = id_hash(id);
  for (std::size_t at = h & mask_;; at = (at + 1) & mask_) {
    const std::uint64_t slot = slots_[at];
    if (slot == 0) return std::nullopt;
    if ((slot >> 32) != (h >> 32)) continue;
    const auto index = static_cast<std::uint32_t>((slot & 0xffffffffu) - 1);
    if (roster.servers[index].id == id) return index;
  }
}

IndexedRoster::IndexedRoster(Roster decoded) : roster(std::move(decoded)) {
  members.build(roster);
  by_key_id.reserve(roster.servers.size());
  for (std::uint32_t i = 0; i < roster.servers.size(); ++i) {
    by_key_id.emplace_back(key_id_of(roster.servers[i].key), i);
  }
  std::sort(by_key_id.begin(), by_key_id.end());
}

std::span<const std::pair<KeyId, std::uint32_t>> IndexedRoster::with_key_id(KeyId id) const {
  auto first = std::lower_bound(by_key_id.begin(), by_key_id.end(), std::make_pair(id, 0u));
  auto last = first;
  while (last != by_key_id.end() && last->first == id) ++last;
  return {first, last};
}

std::optional<std::uint32_t> IndexedRoster::index_of_key(const PublicKey& key) const {
  for (const auto& [id, index] : with_key_id(key_id_of(key))) {
    if (roster.servers[index].key == key) return index;
  }
  return std::nullopt;
}

}  // namespace mesh::gossip

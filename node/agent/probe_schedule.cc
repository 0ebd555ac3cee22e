#include "node/agent/probe_schedule.h"

#include <algorithm>
#include <map>
#include <string_view>
#include <vector>

#include "common/check.h"
#include "common/rng.h"
#include "verdict/hash.h"

namespace mesh::agent {

CountryPlace country_place(const Roster& roster, std::string_view country) {
  std::vector<std::string_view> codes;
  codes.reserve(roster.servers.size());
  for (const ServerEntry& server : roster.servers) codes.emplace_back(server.country);
  std::sort(codes.begin(), codes.end());
  codes.erase(std::unique(codes.begin(), codes.end()), codes.end());
  const auto it = std::lower_bound(codes.begin(), codes.end(), country);
  if (it == codes.end() || *it != country) return CountryPlace{};
  return CountryPlace{static_cast<std::uint32_t>(it - codes.begin()), static_cast<std::uint32_t>(codes.size())};
}

std::uint32_t probe_base_phase(std::string_view target_id) {
  // The high half of splitmix64 of the id's FNV-1a 64 (ids that differ in
  // their last character, de-1 and de-2, differ only in FNV's low bits:
  // without the mix their slots would bunch).
  return static_cast<std::uint32_t>(splitmix64(verdict::fnv1a64(target_id)) >> 32);
}

std::uint32_t probe_phase(std::string_view target_id, CountryPlace country, TlsTurn turn) {
  // The base, then (rank + index / count) / turns, as
  // (rank x count + index) / (turns x count).
  const std::uint32_t base = probe_base_phase(target_id);
  const std::uint64_t turns = std::max<std::uint32_t>(turn.turns, 1);
  const std::uint64_t count = std::max<std::uint32_t>(country.count, 1);
  const std::uint64_t slot = (turn.rank % turns) * count + country.index % count;
  const auto step = static_cast<std::uint32_t>((std::uint64_t{1} << 32) * slot / (turns * count));
  return base + step;  // mod 2^32
}

UnixMs next_slot_ms(UnixMs from, DurationMs interval_ms, std::uint32_t phase) {
  MESH_CHECK(interval_ms > 0, "next_slot_ms: interval_ms must be positive");
  const auto offset = static_cast<DurationMs>(
      (static_cast<unsigned __int128>(phase) * static_cast<std::uint64_t>(interval_ms)) >> 32);
  // Slots are k * interval + offset; the first at or after `from`.
  const UnixMs shifted = from - offset;
  const UnixMs k = shifted >= 0 ? (shifted + interval_ms - 1) / interval_ms : -((-shifted) / interval_ms);
  return k * interval_ms + offset;
}

void ProbeSchedule::set_targets(const Roster& roster, std::span<const std::uint32_t> targets,
                                UnixMs now) {
  std::map<std::string_view, ScheduledTarget*> held;
  for (ScheduledTarget& target : targets_) held[target.id] = &target;
  std::vector<ScheduledTarget> next;
  next.reserve(targets.size());
  for (std::uint32_t index : targets) {
    const ServerId& id = roster.servers[index].id;
    auto it = held.find(id);
    if (it != held.end()) {
      next.push_back(std::move(*it->second));
      held.erase(it);
    } else {
      ScheduledTarget fresh;
      fresh.id = id;
      fresh.added_ms = now;
      fresh.next_ms = now;
      next.push_back(std::move(fresh));
    }
    next.back().index = index;
  }
  // Dropped targets with a probe in flight: its outcome still settles.
  for (auto& [id, target] : held) {
    if (target->in_flight != 0) departed_.push_back(std::move(*target));
  }
  targets_ = std::move(next);
  update_earliest();
}

void ProbeSchedule::set_phase(ScheduledTarget& target, std::uint32_t phase, UnixMs now,
                              DurationMs interval_ms) {
  target.phase = phase;
  if (target.placed) return;
  target.placed = true;
  if (target.in_flight == 0) {
    target.next_ms = next_slot_ms(now, std::max<DurationMs>(interval_ms, 1), phase);
    update_earliest();
  }
}

void ProbeSchedule::start(ScheduledTarget& target, std::uint64_t probe_id, UnixMs now,
                          DurationMs interval_ms, std::uint64_t reserved_bytes, bool tls) {
  target.in_flight = probe_id;
  target.requested_ms = now;
  target.reserved_bytes = reserved_bytes;
  target.tls = tls;
  if (tls) target.last_tls_ms = now;
  const DurationMs interval = std::max<DurationMs>(interval_ms, 1);
  target.next_ms = next_slot_ms(now + interval / 2, interval, target.phase);
  target.placed = true;
  ++in_flight_;
}

std::optional<ScheduledTarget> ProbeSchedule::finish(std::string_view target_id,
                                                     std::uint64_t probe_id) {
  if (probe_id == 0) return std::nullopt;
  auto matches = [&](const ScheduledTarget& target) {
    return target.in_flight == probe_id && target.id == target_id;
  };
  if (auto it = std::find_if(targets_.begin(), targets_.end(), matches); it != targets_.end()) {
    ScheduledTarget was = *it;
    it->in_flight = 0;
    --in_flight_;
    earliest_ms_ = std::min(earliest_ms_, it->next_ms);
    return was;
  }
  if (auto it = std::find_if(departed_.begin(), departed_.end(), matches); it != departed_.end()) {
    ScheduledTarget was = std::move(*it);
    departed_.erase(it);
    --in_flight_;
    return was;
  }
  return std::nullopt;
}

std::uint64_t ProbeSchedule::expire(UnixMs now, DurationMs lost_after_ms) {
  auto is_lost = [&](const ScheduledTarget& target) {
    return target.in_flight != 0 && now - target.requested_ms > lost_after_ms;
  };
  std::uint64_t lost = 0;
  for (ScheduledTarget& target : targets_) {
    if (!is_lost(target)) continue;
    target.in_flight = 0;
    ++lost;
  }
  lost += static_cast<std::uint64_t>(std::erase_if(departed_, is_lost));
  in_flight_ -= static_cast<std::size_t>(lost);
  update_earliest();
  return lost;
}

bool ProbeSchedule::hurry(std::uint32_t index, UnixMs now) {
  ScheduledTarget* target = find(index);
  if (target == nullptr || target->in_flight != 0 || target->next_ms <= now) return false;
  bring_forward(*target, now);
  return true;
}

void ProbeSchedule::bring_forward(ScheduledTarget& target, UnixMs at_ms) {
  target.next_ms = std::min(target.next_ms, at_ms);
  if (target.in_flight == 0) earliest_ms_ = std::min(earliest_ms_, target.next_ms);
}

ScheduledTarget* ProbeSchedule::find(std::uint32_t index) {
  // Targets are in roster order (set_targets takes sorted indices).
  auto it = std::lower_bound(targets_.begin(), targets_.end(), index,
                             [](const ScheduledTarget& target, std::uint32_t i) { return target.index < i; });
  return it != targets_.end() && it->index == index ? &*it : nullptr;
}

ScheduledTarget* ProbeSchedule::find(std::string_view target_id) {
  auto it = std::find_if(targets_.begin(), targets_.end(),
                         [&](const ScheduledTarget& target) { return target.id == target_id; });
  return it != targets_.end() ? &*it : nullptr;
}

void ProbeSchedule::shift(DurationMs delta_ms) {
  for (std::vector<ScheduledTarget>* list : {&targets_, &departed_}) {
    for (ScheduledTarget& target : *list) {
      target.next_ms += delta_ms;
      target.requested_ms += delta_ms;
      target.added_ms += delta_ms;
      if (target.last_tls_ms != std::numeric_limits<UnixMs>::min()) target.last_tls_ms += delta_ms;
      if (target.streak_started_ms != 0) target.streak_started_ms += delta_ms;
      if (target.trigger_anchor_ms != 0) target.trigger_anchor_ms += delta_ms;
      target.confirm_rounds.shift(delta_ms);
      target.triggered.shift(delta_ms);
    }
  }
  update_earliest();
}

void ProbeSchedule::update_earliest() {
  earliest_ms_ = std::numeric_limits<UnixMs>::max();
  for (const ScheduledTarget& target : targets_) {
    if (target.in_flight == 0) earliest_ms_ = std::min(earliest_ms_, target.next_ms);
  }
}

}  // namespace mesh::agent

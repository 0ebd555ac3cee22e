#include "node/agent/flap_history.h"

#include <algorithm>

namespace mesh::agent {
namespace {

constexpr std::uint8_t kFlapFormat = 1;

void put_be64(Bytes& out, std::uint64_t value) {
  for (int shift = 56; shift >= 0; shift -= 8) out.push_back(static_cast<std::uint8_t>(value >> shift));
}

std::uint64_t get_be64(ByteView bytes, std::size_t at) {
  std::uint64_t value = 0;
  for (std::size_t i = 0; i < 8; ++i) value = (value << 8) | bytes[at + i];
  return value;
}

}  // namespace

void FlapHistory::failed(UnixMs now) {
  if (changes_.size() == kFlapChangesKept) changes_.erase(changes_.begin());
  changes_.push_back(now);
}

void FlapHistory::recovered(UnixMs now, DurationMs base_ms) {
  const auto recent = static_cast<std::uint32_t>(
      std::count_if(changes_.begin(), changes_.end(), [&](UnixMs t) { return now - t < kFlapWindowMs; }));
  if (recent <= 1) {
    hold_until_ms_ = 0;
    return;
  }
  DurationMs hold = std::max<DurationMs>(base_ms, 1);
  for (std::uint32_t i = 2; i < recent && hold < kFlapHoldMaxMs; ++i) hold *= 2;
  hold_until_ms_ = now + std::min(hold, kFlapHoldMaxMs);
}

Flapping FlapHistory::at(UnixMs timestamp) const {
  const auto recent = static_cast<std::uint32_t>(std::count_if(
      changes_.begin(), changes_.end(), [&](UnixMs t) { return t <= timestamp && timestamp - t < kFlapWindowMs; }));
  if (recent == 0) return {};
  const DurationMs hold = std::clamp<DurationMs>(hold_until_ms_ - timestamp, 0, kFlapHoldMsMax);
  return Flapping{recent, hold};
}

Bytes FlapHistory::encode() const {
  Bytes out{kFlapFormat, static_cast<std::uint8_t>(changes_.size())};
  for (UnixMs t : changes_) put_be64(out, static_cast<std::uint64_t>(t));
  put_be64(out, static_cast<std::uint64_t>(hold_until_ms_));
  return out;
}

std::optional<FlapHistory> FlapHistory::decode(ByteView bytes) {
  if (bytes.size() < 2 || bytes[0] != kFlapFormat || bytes[1] > kFlapChangesKept ||
      bytes.size() != 2 + 8 * (std::size_t{bytes[1]} + 1)) {
    return std::nullopt;
  }
  FlapHistory history;
  for (std::size_t i = 0; i < bytes[1]; ++i) {
    const auto t = static_cast<UnixMs>(get_be64(bytes, 2 + 8 * i));
    if (!history.changes_.empty() && t < history.changes_.back()) return std::nullopt;
    history.changes_.push_back(t);
  }
  history.hold_until_ms_ = static_cast<UnixMs>(get_be64(bytes, 2 + 8 * std::size_t{bytes[1]}));
  return history;
}

}  // namespace mesh::agent

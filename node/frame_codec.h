// The gossip transport's framing (docs/PROTOCOL.md, "2a. Transport"): on a
// TCP stream every frame is a 4-byte big-endian length followed by that many
// bytes. Pure functions, no socket: the transport and its tests share them.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>

namespace mesh::node {

inline constexpr std::size_t kFramePrefixBytes = 4;
using FramePrefix = std::array<std::uint8_t, kFramePrefixBytes>;

// The prefix announcing a frame of `frame_bytes`.
// REQUIRES: frame_bytes <= UINT32_MAX (the transport never queues more than
// its frame_bytes_max, about 1 MiB).
FramePrefix encode_frame_prefix(std::size_t frame_bytes);

// The length a received prefix announces. Any value may arrive: check it
// with check_frame_length before allocating anything.
std::uint32_t decode_frame_prefix(const FramePrefix& prefix);

enum class FrameLength {
  ok,        // 1..frame_bytes_max: read the body
  empty,     // 0: no frame is empty; the peer is broken or hostile
  oversize,  // above frame_bytes_max: never allocated, never read
};

// What to do with an announced length under the bound `frame_bytes_max`.
FrameLength check_frame_length(std::uint32_t announced_bytes, std::size_t frame_bytes_max);

}  // namespace mesh::node

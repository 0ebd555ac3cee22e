// Length prefix of the gossip transport (docs/PROTOCOL.md, "2a. Transport").
#include "node/frame_codec.h"

#include "common/check.h"

namespace mesh::node {

FramePrefix encode_frame_prefix(std::size_t frame_bytes) {
  MESH_CHECK(frame_bytes <= UINT32_MAX, "frame longer than a 32-bit length prefix");
  const auto length = static_cast<std::uint32_t>(frame_bytes);
  return FramePrefix{static_cast<std::uint8_t>(length >> 24), static_cast<std::uint8_t>(length >> 16),
                     static_cast<std::uint8_t>(length >> 8), static_cast<std::uint8_t>(length)};
}

std::uint32_t decode_frame_prefix(const FramePrefix& prefix) {
  return (std::uint32_t{prefix[0]} << 24) | (std::uint32_t{prefix[1]} << 16) |
         (std::uint32_t{prefix[2]} << 8) | std::uint32_t{prefix[3]};
}

FrameLength check_frame_length(std::uint32_t announced_bytes, std::size_t frame_bytes_max) {
  if (announced_bytes == 0) return FrameLength::empty;
  if (announced_bytes > frame_bytes_max) return FrameLength::oversize;
  return FrameLength::ok;
}

}  // namespace mesh::node

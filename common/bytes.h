// Byte buffers and views, and hex, the encoding of keys and test vectors.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace mesh {

using Bytes = std::vector<std::uint8_t>;
using ByteView = std::span<const std::uint8_t>;

inline ByteView as_bytes(std::string_view text) {
  return {reinterpret_cast<const std::uint8_t*>(text.data()), text.size()};
}

// Lower-case hex of `bytes`.
std::string to_hex(ByteView bytes);

// Parses hex (either case, no separators). nullopt on odd length or a
// non-hex character.
std::optional<Bytes> from_hex(std::string_view hex);

}  // namespace mesh

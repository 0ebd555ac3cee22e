// Strict msgpack cursor (see msgpack_reader.h). Type bytes follow the
// msgpack spec; the accepted subset is docs/PROTOCOL.md, "msgpack subset".
#include "record/msgpack_reader.h"

namespace mesh::msgpack_reader {
namespace {

// Width of the size field after a str8/16/32, bin8/16/32 or array16/32 byte.
constexpr std::size_t width_of(std::uint8_t b, std::uint8_t first8) {
  return b == first8 ? 1 : b == first8 + 1 ? 2 : 4;
}

}  // namespace

bool Reader::read_be(std::size_t at, std::size_t width, std::uint64_t* value) const {
  if (input_.size() - at < width) return false;
  std::uint64_t v = 0;
  for (std::size_t i = 0; i < width; ++i) v = v << 8 | input_[at + i];
  *value = v;
  return true;
}

ReadStatus Reader::read_array_header(std::uint32_t* count, std::uint32_t max) {
  if (at_end()) return ReadStatus::truncated;
  std::uint8_t b = input_[offset_];
  std::uint64_t n = 0;
  std::size_t header = 1;
  if (b >= 0x90 && b <= 0x9f) {
    n = b & 0x0f;
  } else if (b == 0xdc || b == 0xdd) {
    header += b == 0xdc ? 2 : 4;
    if (!read_be(offset_ + 1, header - 1, &n)) return ReadStatus::truncated;
  } else {
    return ReadStatus::wrong_type;
  }
  if (n > max) return ReadStatus::array_too_long;
  *count = static_cast<std::uint32_t>(n);
  offset_ += header;
  return ReadStatus::ok;
}

ReadStatus Reader::read_uint(std::uint64_t* value) {
  if (at_end()) return ReadStatus::truncated;
  std::uint8_t b = input_[offset_];
  if (b <= 0x7f) {
    *value = b;
    offset_ += 1;
    return ReadStatus::ok;
  }
  bool is_unsigned = b >= 0xcc && b <= 0xcf;
  bool is_signed = b >= 0xd0 && b <= 0xd3;
  if (!is_unsigned && !is_signed) return ReadStatus::wrong_type;
  std::size_t width = std::size_t{1} << (b & 0x03);
  std::uint64_t v = 0;
  if (!read_be(offset_ + 1, width, &v)) return ReadStatus::truncated;
  // A signed encoding is accepted only when it holds a value >= 0.
  if (is_signed && (input_[offset_ + 1] & 0x80) != 0) return ReadStatus::wrong_type;
  *value = v;
  offset_ += 1 + width;
  return ReadStatus::ok;
}

// For a str or bin type byte `first`: the width of its size field and the
// size, checking that the header and the whole body are present.
ReadStatus Reader::read_sized(std::uint8_t first, std::size_t* size_width,
                              std::uint64_t* size) const {
  if (first >= 0xa0 && first <= 0xbf) {
    *size_width = 0;
    *size = first & 0x1f;
  } else {
    *size_width = first <= 0xc6 ? width_of(first, 0xc4) : width_of(first, 0xd9);
    if (!read_be(offset_ + 1, *size_width, size)) return ReadStatus::truncated;
  }
  if (remaining() - 1 - *size_width < *size) return ReadStatus::truncated;
  return ReadStatus::ok;
}

ReadStatus Reader::read_str(std::string_view* text, std::size_t max) {
  if (at_end()) return ReadStatus::truncated;
  std::uint8_t b = input_[offset_];
  if (!((b >= 0xa0 && b <= 0xbf) || (b >= 0xd9 && b <= 0xdb))) return ReadStatus::wrong_type;
  std::size_t width = 0;
  std::uint64_t size = 0;
  if (ReadStatus status = read_sized(b, &width, &size); status != ReadStatus::ok) return status;
  if (size > max) return ReadStatus::str_too_long;
  const auto* body = input_.data() + offset_ + 1 + width;
  *text = std::string_view(reinterpret_cast<const char*>(body), static_cast<std::size_t>(size));
  offset_ += 1 + width + static_cast<std::size_t>(size);
  return ReadStatus::ok;
}

ReadStatus Reader::read_bin(ByteView* bytes, std::size_t max) {
  if (at_end()) return ReadStatus::truncated;
  std::uint8_t b = input_[offset_];
  if (b < 0xc4 || b > 0xc6) return ReadStatus::wrong_type;
  std::size_t width = 0;
  std::uint64_t size = 0;
  if (ReadStatus status = read_sized(b, &width, &size); status != ReadStatus::ok) return status;
  if (size > max) return ReadStatus::bin_too_long;
  *bytes = input_.subspan(offset_ + 1 + width, static_cast<std::size_t>(size));
  offset_ += 1 + width + static_cast<std::size_t>(size);
  return ReadStatus::ok;
}

ReadStatus Reader::read_bool(bool* value) {
  if (at_end()) return ReadStatus::truncated;
  std::uint8_t b = input_[offset_];
  if (b != 0xc2 && b != 0xc3) return ReadStatus::wrong_type;
  *value = b == 0xc3;
  offset_ += 1;
  return ReadStatus::ok;
}

ReadStatus Reader::read_nil() {
  if (at_end()) return ReadStatus::truncated;
  if (input_[offset_] != 0xc0) return ReadStatus::wrong_type;
  offset_ += 1;
  return ReadStatus::ok;
}

ReadStatus Reader::skip_value(const SkipLimits& limits) { return skip_one(limits, 0); }

// `depth` is the number of arrays open around this value; recursion is
// bounded by limits.depth_max.
ReadStatus Reader::skip_one(const SkipLimits& limits, std::uint32_t depth) {
  if (at_end()) return ReadStatus::truncated;
  std::uint8_t b = input_[offset_];
  if (b <= 0x7f || b >= 0xe0 || b == 0xc0 || b == 0xc2 || b == 0xc3) {
    offset_ += 1;
    return ReadStatus::ok;
  }
  if ((b >= 0x90 && b <= 0x9f) || b == 0xdc || b == 0xdd) {
    std::uint32_t count = 0;
    ReadStatus status = read_array_header(&count, limits.array_elements_max);
    if (status != ReadStatus::ok) return status;
    if (depth >= limits.depth_max) return ReadStatus::too_deep;
    for (std::uint32_t i = 0; i < count; ++i) {
      if ((status = skip_one(limits, depth + 1)) != ReadStatus::ok) return status;
    }
    return ReadStatus::ok;
  }
  if ((b >= 0x80 && b <= 0x8f) || b == 0xde || b == 0xdf) {
    std::size_t width = b <= 0x8f ? 0 : b == 0xde ? 2 : 4;
    std::uint64_t pairs = b & 0x0f;
    if (width > 0 && !read_be(offset_ + 1, width, &pairs)) return ReadStatus::truncated;
    if (pairs > 0) return ReadStatus::invalid;  // maps have no place in records
    if (depth >= limits.depth_max) return ReadStatus::too_deep;
    offset_ += 1 + width;
    return ReadStatus::ok;
  }
  if ((b >= 0xa0 && b <= 0xbf) || (b >= 0xd9 && b <= 0xdb)) {
    std::string_view text;
    return read_str(&text, limits.str_bytes_max);
  }
  if (b >= 0xc4 && b <= 0xc6) {
    ByteView bytes;
    return read_bin(&bytes, limits.bin_bytes_max);
  }
  if (b >= 0xc7 && b <= 0xc9) {  // ext 8/16/32: size, type byte, data
    std::size_t width = width_of(b, 0xc7);
    std::uint64_t size = 0;
    if (!read_be(offset_ + 1, width, &size)) return ReadStatus::truncated;
    if (width == 4 && size == 0xffffffff) return ReadStatus::invalid;
    return remaining() - 1 - width < size + 1 ? ReadStatus::truncated : ReadStatus::invalid;
  }
  if (b >= 0xd4 && b <= 0xd8) {  // fixext 1..16: type byte and data
    std::size_t size = 1 + (std::size_t{1} << (b - 0xd4));
    return remaining() - 1 < size ? ReadStatus::truncated : ReadStatus::invalid;
  }
  if (b >= 0xca && b <= 0xd3) {  // float 32/64, uint 8..64, int 8..64
    static constexpr std::size_t kWidth[] = {4, 8, 1, 2, 4, 8, 1, 2, 4, 8};
    std::size_t width = kWidth[b - 0xca];
    if (remaining() - 1 < width) return ReadStatus::truncated;
    offset_ += 1 + width;
    return ReadStatus::ok;
  }
  return ReadStatus::invalid;  // c1: never used
}

}  // namespace mesh::msgpack_reader

// Internal to record/: a strict, allocation-free msgpack cursor for the
// subset of docs/PROTOCOL.md ("msgpack subset"). Each read either consumes
// exactly one value of the asked family and returns kOk, or returns why not
// and leaves the cursor where it was. Strings and bins are returned as views
// into the input; nothing is copied or allocated.
//
// Truncation takes precedence over size limits: a str or bin whose body is
// not wholly present is `truncated`, even if its header is also over the
// limit (msgpack-c, which the codecs used before, behaves the same; the
// differential test in tests/record/ holds both to it).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

#include "common/bytes.h"

namespace mesh::msgpack_reader {

enum class ReadStatus {
  ok,
  truncated,       // the input ends inside the value
  wrong_type,      // a value of another family (or a negative integer)
  invalid,         // a byte that starts no value (c1), an ext, or a non-empty map
  too_deep,        // arrays nested deeper than the limit (skip only)
  str_too_long,    // a whole str over its limit
  bin_too_long,    // a whole bin over its limit
  array_too_long,  // an array header counting more elements than its limit
};

// Limits for skip_value: every str, bin and array anywhere in the value, and
// the nesting depth (1 = a flat array of scalars).
struct SkipLimits {
  std::size_t str_bytes_max;
  std::size_t bin_bytes_max;
  std::uint32_t array_elements_max;
  std::uint32_t depth_max;
};

class Reader {
 public:
  explicit Reader(ByteView input) : input_(input) {}

  std::size_t offset() const { return offset_; }
  std::size_t remaining() const { return input_.size() - offset_; }
  bool at_end() const { return offset_ == input_.size(); }

  // An array header (fixarray, array16, array32) of at most `max` elements.
  ReadStatus read_array_header(std::uint32_t* count, std::uint32_t max = UINT32_MAX);
  // A non-negative integer in any encoding: positive fixint, uint8..64, or
  // int8..64 holding a value >= 0.
  ReadStatus read_uint(std::uint64_t* value);
  ReadStatus read_str(std::string_view* text, std::size_t max);
  ReadStatus read_bin(ByteView* bytes, std::size_t max);
  ReadStatus read_bool(bool* value);
  ReadStatus read_nil();
  // True when the next byte is nil (c0); consumes nothing.
  bool next_is_nil() const { return !at_end() && input_[offset_] == 0xc0; }
  // The byte at the cursor. REQUIRES: !at_end().
  std::uint8_t peek_byte() const { return input_[offset_]; }

  // Walks one whole value of any msgpack family under `limits`, the way
  // msgpack-c's unpack with an unpack_limit does: floats, negative integers,
  // nil, booleans and empty maps pass; ext and non-empty maps are `invalid`.
  // On failure the cursor is left inside the value.
  ReadStatus skip_value(const SkipLimits& limits);

 private:
  // Reads a `width`-byte big-endian unsigned number after the type byte.
  bool read_be(std::size_t at, std::size_t width, std::uint64_t* value) const;
  ReadStatus read_sized(std::uint8_t first, std::size_t* size_width, std::uint64_t* size) const;
  ReadStatus skip_one(const SkipLimits& limits, std::uint32_t depth);

  ByteView input_;
  std::size_t offset_ = 0;
};

}  // namespace mesh::msgpack_reader

// Test helper: a msgpack writer that can break the structure it writes, for
// building hostile payloads field by field. It counts scalars and array
// headers in writing order; the scalar numbered `bad_scalar` is replaced by a
// value of another family (or by arrays nested five deep), and the array
// header numbered `miscounted_array` is written one off. A dry run with
// neither (-1) tells how many there are to choose from. Test-only (msgpack
// stays out of library headers).
#pragma once

#include <cstdint>
#include <msgpack.hpp>
#include <random>
#include <string>

#include "common/bytes.h"

namespace mesh::test {

class FaultWriter {
 public:
  enum class Bad { none, wrong_type, too_deep };

  FaultWriter(std::mt19937& rng, Bad bad, int bad_scalar, int miscounted_array)
      : rng_(rng), packer_(buffer_), bad_(bad), bad_scalar_(bad_scalar),
        miscounted_array_(miscounted_array) {}

  int scalars() const { return scalars_; }
  int arrays() const { return arrays_; }
  Bytes bytes() const;

  void array(std::uint32_t count);
  // Any encoding the strict reader accepts for a non-negative integer, drawn
  // at random: shortest, fixed uint8..64 or fixed int64.
  void uint(std::uint64_t value);
  void boolean(bool value);
  void nil();
  void str(const std::string& text);
  void bin(const Bytes& bytes);

 private:
  // Counts a scalar; true when it was replaced by a bad value.
  bool replaced();

  std::mt19937& rng_;
  msgpack::sbuffer buffer_;
  msgpack::packer<msgpack::sbuffer> packer_;
  Bad bad_;
  int bad_scalar_;
  int miscounted_array_;
  int scalars_ = 0;
  int arrays_ = 0;
};

}  // namespace mesh::test

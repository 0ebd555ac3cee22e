#include "tests/record/fault_writer.h"

#include <limits>

namespace mesh::test {

Bytes FaultWriter::bytes() const {
  const auto* begin = reinterpret_cast<const std::uint8_t*>(buffer_.data());
  return Bytes(begin, begin + buffer_.size());
}

void FaultWriter::array(std::uint32_t count) {
  if (arrays_++ == miscounted_array_) count = rng_() % 2 == 0 || count == 0 ? count + 1 : count - 1;
  packer_.pack_array(count);
}

void FaultWriter::uint(std::uint64_t value) {
  if (replaced()) return;
  switch (rng_() % 4) {
    case 0: packer_.pack_uint64(value); break;  // the shortest
    case 1:
      if (value <= 0xff) {
        packer_.pack_fix_uint8(static_cast<std::uint8_t>(value));
      } else if (value <= 0xffff) {
        packer_.pack_fix_uint16(static_cast<std::uint16_t>(value));
      } else if (value <= std::numeric_limits<std::uint32_t>::max()) {
        packer_.pack_fix_uint32(static_cast<std::uint32_t>(value));
      } else {
        packer_.pack_fix_uint64(value);
      }
      break;
    case 2: packer_.pack_fix_uint64(value); break;
    default:
      if (value <= static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max())) {
        packer_.pack_fix_int64(static_cast<std::int64_t>(value));
      } else {
        packer_.pack_uint64(value);
      }
  }
}

void FaultWriter::boolean(bool value) {
  if (!replaced()) value ? packer_.pack_true() : packer_.pack_false();
}

void FaultWriter::nil() {
  if (!replaced()) packer_.pack_nil();
}

void FaultWriter::str(const std::string& text) {
  if (replaced()) return;
  packer_.pack_str(static_cast<std::uint32_t>(text.size()));
  packer_.pack_str_body(text.data(), static_cast<std::uint32_t>(text.size()));
}

void FaultWriter::bin(const Bytes& bytes) {
  if (replaced()) return;
  packer_.pack_bin(static_cast<std::uint32_t>(bytes.size()));
  packer_.pack_bin_body(reinterpret_cast<const char*>(bytes.data()),
                        static_cast<std::uint32_t>(bytes.size()));
}

bool FaultWriter::replaced() {
  if (scalars_++ != bad_scalar_ || bad_ == Bad::none) return false;
  if (bad_ == Bad::too_deep) {
    for (int depth = 0; depth < 5; ++depth) packer_.pack_array(1);
    packer_.pack_uint8(1);
    return true;
  }
  switch (rng_() % 10) {
    case 0: packer_.pack_double(1.5); break;
    case 1: packer_.pack_float(2.5f); break;
    case 2: packer_.pack_map(0); break;  // an empty map is well-formed, a wrong type
    case 3: packer_.pack_map(1); packer_.pack_uint8(1); packer_.pack_uint8(1); break;
    case 4: packer_.pack_int8(-1); break;
    case 5: packer_.pack_nil(); break;
    case 6: packer_.pack_str(1); packer_.pack_str_body("x", 1); break;
    case 7: packer_.pack_true(); break;
    case 8: packer_.pack_array(1); packer_.pack_uint8(1); break;
    default: packer_.pack_ext(1, 7); packer_.pack_ext_body("x", 1); break;
  }
  return true;
}

}  // namespace mesh::test

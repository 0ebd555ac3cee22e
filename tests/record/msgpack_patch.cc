#include "tests/record/msgpack_patch.h"

namespace mesh::test {
namespace {

void walk(Packer& packer, const msgpack::object& object, const std::vector<std::uint32_t>& path,
          std::size_t depth, const std::function<void(Packer&)>& replacement) {
  if (depth == path.size()) {
    replacement(packer);
    return;
  }
  if (object.type != msgpack::type::ARRAY) {
    packer.pack(object);
    return;
  }
  packer.pack_array(object.via.array.size);
  for (std::uint32_t i = 0; i < object.via.array.size; ++i) {
    if (i == path[depth]) {
      walk(packer, object.via.array.ptr[i], path, depth + 1, replacement);
    } else {
      packer.pack(object.via.array.ptr[i]);
    }
  }
}

}  // namespace

Bytes patch_msgpack(ByteView document, const std::vector<std::uint32_t>& path,
                    const std::function<void(Packer&)>& replacement) {
  msgpack::object_handle handle =
      msgpack::unpack(reinterpret_cast<const char*>(document.data()), document.size());
  msgpack::sbuffer buffer;
  Packer packer(buffer);
  walk(packer, handle.get(), path, 0, replacement);
  const auto* begin = reinterpret_cast<const std::uint8_t*>(buffer.data());
  return Bytes(begin, begin + buffer.size());
}

}  // namespace mesh::test

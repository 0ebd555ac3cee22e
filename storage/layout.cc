#include "storage/layout.h"

#include "common/check.h"

namespace mesh {

Bytes encode_record_key(std::uint8_t kind, std::string_view origin) {
  MESH_CHECK(!origin.empty() && origin.size() <= kOriginBytesMax, "record origin out of bounds");
  Bytes key;
  key.reserve(1 + origin.size());
  key.push_back(kind);
  key.insert(key.end(), origin.begin(), origin.end());
  return key;
}

std::optional<RecordKey> decode_record_key(ByteView key) {
  if (key.size() < 2 || key.size() > kRecordKeyBytesMax) return std::nullopt;
  return RecordKey{key[0], std::string_view(reinterpret_cast<const char*>(key.data()) + 1,
                                            key.size() - 1)};
}

}  // namespace mesh

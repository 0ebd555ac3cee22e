// Test helper: rewrites one element of a msgpack document, to build hostile
// payloads from valid ones. Test-only (msgpack stays out of library headers).
#pragma once

#include <cstdint>
#include <functional>
#include <msgpack.hpp>
#include <vector>

#include "common/bytes.h"

namespace mesh::test {

using Packer = msgpack::packer<msgpack::sbuffer>;

// Re-packs `document` with the element at `path` (array indices from the
// root) replaced by what `replacement` packs. An empty path replaces the root.
Bytes patch_msgpack(ByteView document, const std::vector<std::uint32_t>& path,
                    const std::function<void(Packer&)>& replacement);

}  // namespace mesh::test

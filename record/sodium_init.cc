#include "record/sodium_init.h"

#include <sodium.h>

#include <mutex>

#include "common/check.h"

namespace mesh {

void ensure_sodium_initialized() {
  static std::once_flag once;
  std::call_once(once, [] { MESH_CHECK(sodium_init() >= 0, "sodium_init failed"); });
}

}  // namespace mesh

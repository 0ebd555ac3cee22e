#include "storage/lmdb_error.h"

#include <lmdb.h>

#include <cerrno>
#include <string>

namespace mesh {

const char* to_string(StoreError error) {
  switch (error) {
    case StoreError::io: return "io";
    case StoreError::not_found: return "not_found";
    case StoreError::schema_mismatch: return "schema_mismatch";
    case StoreError::map_full: return "map_full";
    case StoreError::too_large: return "too_large";
    case StoreError::invalid_argument: return "invalid_argument";
    case StoreError::corrupt: return "corrupt";
    case StoreError::read_only: return "read_only";
    case StoreError::busy: return "busy";
  }
  return "unknown";
}

StoreError classify_lmdb_error(int rc) {
  switch (rc) {
    case MDB_NOTFOUND:
    case ENOENT:
      return StoreError::not_found;
    case MDB_MAP_FULL:
      return StoreError::map_full;
    case MDB_TXN_FULL:
    case MDB_BAD_VALSIZE:
      return StoreError::too_large;
    case MDB_CORRUPTED:
    case MDB_PAGE_NOTFOUND:
    case MDB_INVALID:
    case MDB_VERSION_MISMATCH:
    case MDB_INCOMPATIBLE:
      return StoreError::corrupt;
    case MDB_READERS_FULL:
    case MDB_MAP_RESIZED:
    case EAGAIN:
    case EBUSY:
      return StoreError::busy;
    default:
      return StoreError::io;
  }
}

Error<StoreError> lmdb_error(std::string_view dir, std::string_view what, int rc) {
  std::string message = "storage ";
  message.append(dir).append(": ").append(what).append(": ").append(mdb_strerror(rc));
  if (rc == MDB_MAP_RESIZED) message.append(" (another process grew the map; reopen the store)");
  return make_error(classify_lmdb_error(rc), std::move(message));
}

Error<StoreError> store_error(StoreError code, std::string_view dir, std::string_view what) {
  std::string message = "storage ";
  message.append(dir).append(": ").append(what);
  return make_error(code, std::move(message));
}

}  // namespace mesh

// Internal to storage/: turns LMDB return codes into StoreError values whose
// message names the store directory, the failed call and mdb_strerror.
#pragma once

#include <string_view>

#include "common/result.h"
#include "storage/store.h"

namespace mesh {

// The StoreError that best describes LMDB/errno return code `rc` (non-zero).
StoreError classify_lmdb_error(int rc);

// "<dir>: <what>: <mdb_strerror(rc)>" with classify_lmdb_error(rc).
Error<StoreError> lmdb_error(std::string_view dir, std::string_view what, int rc);

// "<dir>: <what>" with the given code, for failures found by this library.
Error<StoreError> store_error(StoreError code, std::string_view dir, std::string_view what);

}  // namespace mesh

// The on-disk layout of a Store: database names, fixed keys, key encodings
// and the named maxima every write is checked against (docs/STORAGE.md).
// Changing anything here that alters existing bytes requires a new
// kSchemaVersion.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>

#include "common/bytes.h"
#include "common/server_id.h"
#include "record/envelope.h"

namespace mesh {

// Bumped whenever the meaning of stored bytes changes. A store with any
// other version is refused (StoreError::schema_mismatch), never rewritten.
inline constexpr std::uint32_t kSchemaVersion = 1;

// Named databases (LMDB sub-databases) of the environment.
inline constexpr const char* kMetaDb = "meta";        // kSchemaVersionKey -> u32 big-endian
inline constexpr const char* kRosterDb = "roster";    // kRosterKey -> signed roster record
inline constexpr const char* kRecordsDb = "records";  // kind byte + origin -> signed record
inline constexpr const char* kStateDb = "state";      // short key -> node state bytes
inline constexpr unsigned kDatabasesMax = 4;

inline constexpr std::string_view kSchemaVersionKey = "schema_version";
inline constexpr std::string_view kRosterKey = "current";
inline constexpr std::string_view kBootCounterKey = "boot_counter";
// The node a data dir belongs to: its id, a NUL, its 32-byte public key
// (node/lmdb_agent_store.h writes it once and checks it at every start).
inline constexpr std::string_view kNodeIdentityKey = "node/identity";

// Maxima checked before anything is written (StoreError::too_large /
// invalid_argument). Records and the roster are kept as received, so they
// share the envelope's bound.
inline constexpr std::size_t kStoredRecordBytesMax = kRecordBytesMax;
inline constexpr std::size_t kOriginBytesMax = kServerIdBytesMax;
inline constexpr std::size_t kStateKeyBytesMax = 128;
inline constexpr std::size_t kStateValueBytesMax = 4 * 1024 * 1024;  // a verdict snapshot of the largest roster fits
inline constexpr std::size_t kRecordKeyBytesMax = 1 + kOriginBytesMax;

// LMDB handles of the four databases (MDB_dbi is an unsigned int).
struct DatabaseHandles {
  unsigned meta = 0;
  unsigned roster = 0;
  unsigned records = 0;
  unsigned state = 0;
};

// Key of a record in `records`: the kind byte, then the origin's bytes.
// Ordering by key therefore groups records by kind, then origin bytewise.
// REQUIRES: 1 <= origin.size() <= kOriginBytesMax.
Bytes encode_record_key(std::uint8_t kind, std::string_view origin);

struct RecordKey {
  std::uint8_t kind = 0;
  std::string_view origin;  // points into the decoded bytes
};

// nullopt when `key` is not 2..kRecordKeyBytesMax bytes long.
std::optional<RecordKey> decode_record_key(ByteView key);

}  // namespace mesh

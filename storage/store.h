// Store: the node's local state in one LMDB environment (docs/STORAGE.md).
//
// A Store owns an LMDB environment in a directory and hands out typed
// transactions (storage/txn.h). Every failure is a value: StoreError plus a
// message naming the directory, the LMDB call and mdb_strerror's text.
//
// Thread safety: a Store may be shared by threads. Read transactions may be
// opened from any thread and moved between threads (MDB_NOTLS). At most one
// WriteTxn exists per environment at a time, across all processes: a second
// begin_write() blocks until the first ends. A WriteTxn stays on the thread
// that began it (LMDB's writer lock belongs to that thread), and that thread
// must not call begin_write() again before it ends (checked: it would
// deadlock). Other processes may open the same directory read-only
// (meshctl) while the daemon writes; they see committed snapshots only.
//
// Snapshot order: within a process, a read transaction never sees an older
// state than one begun before it. LMDB 0.9.24 alone does not promise this:
// a reader that reads the last txnid and is then delayed across two commits
// picks its meta page while the writer rewrites it, and can get a snapshot
// newer than the one the next reader gets (or, rarely, a torn meta). Each
// commit therefore bumps a sequence (odd while committing); begin_read()
// retries a transaction whose begin overlapped a commit, and after a few
// tries begins under the commit mutex. Commits of another process are
// guarded by the txnid: a read that would begin older than one this Store
// already read is begun again (after a few tries it is taken as it is).
//
// Crash safety: a commit is durable when commit() returns (LMDB syncs the
// data file before and after writing the meta page). A process killed at any
// point leaves the last committed state; nothing of an open transaction.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

#include "common/result.h"
#include "storage/layout.h"

struct MDB_env;  // from <lmdb.h>; kept out of this header

namespace mesh {

enum class StoreError {
  io,                // an OS or LMDB failure with no better code
  not_found,         // the store (or a database in it) does not exist
  schema_mismatch,   // the store carries a schema version this build does not know
  map_full,          // MDB_MAP_FULL: the map size is reached; the txn was aborted
  too_large,         // a value or key over its named maximum; nothing was written
  invalid_argument,  // an empty origin or key, or options out of range
  corrupt,           // the files are not a valid store (bad meta, bad keys)
  read_only,         // a write through a store opened read-only
  busy,              // readers table full, or the map was grown by another process
};

const char* to_string(StoreError error);

inline constexpr std::uint64_t kMapSizeBytesDefault = std::uint64_t{1} << 30;  // 1 GiB
inline constexpr std::uint64_t kMapSizeBytesMin = 64 * 1024;
inline constexpr std::uint64_t kMapSizeBytesMax = std::uint64_t{1} << 40;  // 1 TiB
inline constexpr unsigned kReadersMax = 126;  // concurrent read txns, all processes

struct StoreOptions {
  // Upper bound of the data file. A read-only open ignores it and adopts the
  // size the writer recorded. Must lie in [kMapSizeBytesMin, kMapSizeBytesMax].
  std::uint64_t map_size_bytes = kMapSizeBytesDefault;
  // MDB_RDONLY: for a second process (meshctl) reading while the daemon
  // writes. Never creates anything; begin_write() fails with read_only.
  bool read_only = false;
  // Create the directory (mode 0700, parents too) and an empty store when
  // missing. Ignored when read_only.
  bool create_if_missing = true;
};

class ReadTxn;
class WriteTxn;

class Store {
 public:
  // Opens (or creates, when allowed) the store in `dir`. Checks the schema
  // version in `meta`: a fresh store gets kSchemaVersion written; any other
  // version is schema_mismatch and nothing is modified. A read-only open of
  // a directory without a store is not_found.
  static Result<std::unique_ptr<Store>, StoreError> open(const std::string& dir,
                                                         StoreOptions options);

  // REQUIRES: no transaction of this store is still alive.
  ~Store();
  Store(const Store&) = delete;
  Store& operator=(const Store&) = delete;

  // A snapshot of the last committed state, valid until the ReadTxn dies.
  Result<ReadTxn, StoreError> begin_read() const;

  // The single write transaction; blocks while another one (in any process)
  // is open. read_only error on a read-only store.
  // REQUIRES: the calling thread holds no WriteTxn of this store.
  Result<WriteTxn, StoreError> begin_write();

  // Raises the boot counter in `state` (key kBootCounterKey, 8 bytes
  // big-endian) to max(held + 1, floor), commits, and returns it: strictly
  // larger on every call, across restarts and crashes. The daemon's floor
  // is the seconds since 2026-01-01 (boot_counter_floor): a node whose data
  // dir was lost comes back with its key and a fresh store, and must not
  // count its boots, the prefix of its link nonces, from 1 again.
  Result<std::uint64_t, StoreError> next_boot_counter(std::uint64_t floor = 1);

  const std::string& path() const { return dir_; }
  bool read_only() const { return read_only_; }

 private:
  friend class TxnReader;
  friend class ReadTxn;
  friend class WriteTxn;

  Store(std::string dir, bool read_only, MDB_env* env, DatabaseHandles handles);

  std::string dir_;
  bool read_only_;
  MDB_env* env_;
  DatabaseHandles dbs_;
  // Transactions alive now (destructor check) and the thread holding the
  // WriteTxn (self-deadlock check).
  mutable std::atomic<int> live_txns_{0};
  mutable std::atomic<std::thread::id> writer_thread_{};
  // Snapshot order (see above): odd while a commit runs; commits hold the
  // mutex, a reader that keeps overlapping commits begins under it.
  mutable std::atomic<std::uint64_t> commit_seq_{0};
  mutable std::mutex commit_mutex_;
  mutable std::atomic<std::size_t> newest_read_txnid_{0};  // begin_read(): never an older snapshot
};

}  // namespace mesh

// Typed LMDB transactions over a Store (docs/STORAGE.md).
//
// ReadTxn is a consistent snapshot: everything it returns comes from one
// committed state, whatever writers do meanwhile. WriteTxn sees its own
// writes and publishes all of them at once in commit(), or none: its
// destructor aborts an uncommitted transaction.
//
// Ownership: a ByteView returned by a find_* call points into the LMDB map
// and is valid only until the transaction ends (and, in a WriteTxn, until
// the next write). get_* calls return copies.
//
// Thread safety: a transaction is used by one thread at a time. A ReadTxn may
// move to another thread (MDB_NOTLS); a WriteTxn must end on the thread that
// began it (checked). All transactions must end before
// their Store is destroyed.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>

#include "common/bytes.h"
#include "common/result.h"
#include "storage/store.h"

struct MDB_txn;  // from <lmdb.h>; kept out of this header

namespace mesh {

// Visitor for records: kind, origin, the stored bytes (valid for the call).
using RecordVisitor = std::function<void(std::uint8_t kind, std::string_view origin,
                                         ByteView record)>;

// Visitor for state values: key, value (valid for the call).
using StateVisitor = std::function<void(std::string_view key, ByteView value)>;

// The read side shared by ReadTxn and WriteTxn.
class TxnReader {
 public:
  TxnReader(const TxnReader&) = delete;
  TxnReader& operator=(const TxnReader&) = delete;

  // The stored record of (kind, origin), or nullopt. invalid_argument when
  // origin is empty or over kOriginBytesMax.
  Result<std::optional<ByteView>, StoreError> find_record(std::uint8_t kind,
                                                          std::string_view origin) const;
  Result<std::optional<Bytes>, StoreError> get_record(std::uint8_t kind,
                                                      std::string_view origin) const;

  // Calls `visit` for every record in key order (kind, then origin bytewise).
  // corrupt when a stored key is malformed; the visit stops there.
  Status<StoreError> for_each_record(const RecordVisitor& visit) const;
  // The same, restricted to one kind.
  Status<StoreError> for_each_record_of_kind(std::uint8_t kind, const RecordVisitor& visit) const;

  // Calls `visit` for every state value in key order (bytewise). corrupt
  // when a stored key is empty or over kStateKeyBytesMax; the visit stops there.
  Status<StoreError> for_each_state(const StateVisitor& visit) const;

  // The signed roster record as stored by put_roster, or nullopt.
  Result<std::optional<Bytes>, StoreError> get_roster() const;

  // A node state value, or nullopt. invalid_argument for an empty key or one
  // over kStateKeyBytesMax.
  Result<std::optional<ByteView>, StoreError> find_state(std::string_view key) const;
  Result<std::optional<Bytes>, StoreError> get_state(std::string_view key) const;

 protected:
  TxnReader(const Store* store, MDB_txn* txn);
  TxnReader(TxnReader&& other) noexcept;
  ~TxnReader() = default;

  // REQUIRES: the transaction is live or failed (not committed or moved
  // from). The error to return when it failed, else nullopt.
  std::optional<Error<StoreError>> check_usable() const;
  Result<std::optional<ByteView>, StoreError> find(unsigned dbi, ByteView key,
                                                   const char* db_name) const;
  Status<StoreError> scan(std::optional<std::uint8_t> kind, const RecordVisitor& visit) const;

  const Store* store_;
  MDB_txn* txn_;  // nullptr once committed, aborted or moved from
  // Set when an LMDB failure aborted a WriteTxn: every later call returns it.
  std::optional<Error<StoreError>> failure_;
};

class ReadTxn : public TxnReader {
 public:
  ReadTxn(ReadTxn&& other) noexcept = default;
  ReadTxn& operator=(ReadTxn&&) = delete;
  ~ReadTxn();

 private:
  friend class Store;
  ReadTxn(const Store* store, MDB_txn* txn);
};

class WriteTxn : public TxnReader {
 public:
  WriteTxn(WriteTxn&& other) noexcept;
  WriteTxn& operator=(WriteTxn&&) = delete;
  // Aborts the transaction unless it was committed.
  ~WriteTxn();

  // Stores `record` (the signed bytes exactly as received) under (kind,
  // origin), replacing any previous one. too_large over kStoredRecordBytesMax,
  // invalid_argument for an empty record or a bad origin; in both cases
  // nothing is written and the transaction stays usable. An LMDB failure
  // (map_full, io) aborts the whole transaction: every later call, commit()
  // included, returns that error.
  Status<StoreError> put_record(std::uint8_t kind, std::string_view origin, ByteView record);
  // Removing an absent record is not an error.
  Status<StoreError> delete_record(std::uint8_t kind, std::string_view origin);

  // Replaces the stored roster record (same bounds as put_record).
  Status<StoreError> put_roster(ByteView record);

  // Node state: key 1..kStateKeyBytesMax bytes, value up to
  // kStateValueBytesMax bytes (empty allowed). Same failure rules.
  Status<StoreError> put_state(std::string_view key, ByteView value);
  Status<StoreError> delete_state(std::string_view key);

  // Publishes every write atomically and durably. map_full/io when LMDB
  // cannot commit; then nothing of this transaction is visible, and later
  // calls return that error. After a successful commit the transaction is
  // over: calling anything but the destructor is a bug (checked).
  Status<StoreError> commit();

 private:
  friend class Store;
  WriteTxn(Store* store, MDB_txn* txn);

  Status<StoreError> put(unsigned dbi, const char* db_name, ByteView key, ByteView value);
  Status<StoreError> erase(unsigned dbi, const char* db_name, ByteView key);
  // Aborts after an LMDB failure and remembers it for later calls.
  Error<StoreError> fail(Error<StoreError> error);
  // Commits (returning LMDB's code) or aborts, and releases the writer.
  int finish(bool commit);
};

}  // namespace mesh

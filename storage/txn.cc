#include "storage/txn.h"

#include <lmdb.h>

#include <mutex>
#include <string>
#include <thread>
#include <utility>

#include "common/check.h"
#include "storage/lmdb_error.h"

namespace mesh {

namespace {

MDB_val to_val(ByteView bytes) {
  // An empty span may carry a null pointer; LMDB would memcpy from it.
  static std::uint8_t empty = 0;
  if (bytes.empty()) return MDB_val{0, &empty};
  return MDB_val{bytes.size(), const_cast<std::uint8_t*>(bytes.data())};
}

ByteView to_view(const MDB_val& value) {
  return ByteView(static_cast<const std::uint8_t*>(value.mv_data), value.mv_size);
}

std::optional<Error<StoreError>> check_origin(const std::string& dir, std::string_view origin) {
  if (origin.empty()) return store_error(StoreError::invalid_argument, dir, "empty record origin");
  if (origin.size() > kOriginBytesMax) {
    return store_error(StoreError::too_large, dir,
                       "record origin of " + std::to_string(origin.size()) + " bytes, max " +
                           std::to_string(kOriginBytesMax));
  }
  return std::nullopt;
}

std::optional<Error<StoreError>> check_state_key(const std::string& dir, std::string_view key) {
  if (key.empty()) return store_error(StoreError::invalid_argument, dir, "empty state key");
  if (key.size() > kStateKeyBytesMax) {
    return store_error(StoreError::too_large, dir,
                       "state key of " + std::to_string(key.size()) + " bytes, max " +
                           std::to_string(kStateKeyBytesMax));
  }
  return std::nullopt;
}

std::optional<Error<StoreError>> check_record(const std::string& dir, ByteView record) {
  if (record.empty()) return store_error(StoreError::invalid_argument, dir, "empty record");
  if (record.size() > kStoredRecordBytesMax) {
    return store_error(StoreError::too_large, dir,
                       "record of " + std::to_string(record.size()) + " bytes, max " +
                           std::to_string(kStoredRecordBytesMax));
  }
  return std::nullopt;
}

Result<std::optional<Bytes>, StoreError> copy_out(
    const Result<std::optional<ByteView>, StoreError>& found) {
  if (!found) return found.error();
  if (!found.value()) return std::optional<Bytes>{};
  ByteView view = *found.value();
  return std::optional<Bytes>{Bytes(view.begin(), view.end())};
}

// Closes a cursor on every path out of a scan.
struct CursorCloser {
  MDB_cursor* cursor;
  ~CursorCloser() { mdb_cursor_close(cursor); }
};

}  // namespace

// ---- TxnReader ----

TxnReader::TxnReader(const Store* store, MDB_txn* txn) : store_(store), txn_(txn) {}

TxnReader::TxnReader(TxnReader&& other) noexcept
    : store_(other.store_),
      txn_(std::exchange(other.txn_, nullptr)),
      failure_(std::move(other.failure_)) {
  other.failure_.reset();
}

std::optional<Error<StoreError>> TxnReader::check_usable() const {
  if (failure_) return failure_;
  MESH_CHECK(txn_ != nullptr, "transaction used after commit or move");
  return std::nullopt;
}

Result<std::optional<ByteView>, StoreError> TxnReader::find(unsigned dbi, ByteView key,
                                                           const char* db_name) const {
  if (auto failed = check_usable()) return *failed;
  MDB_val k = to_val(key);
  MDB_val value{};
  int rc = mdb_get(txn_, dbi, &k, &value);
  if (rc == MDB_NOTFOUND) return std::optional<ByteView>{};
  if (rc != 0) return lmdb_error(store_->dir_, std::string("mdb_get(") + db_name + ")", rc);
  return std::optional<ByteView>{to_view(value)};
}

Result<std::optional<ByteView>, StoreError> TxnReader::find_record(
    std::uint8_t kind, std::string_view origin) const {
  if (auto bad = check_origin(store_->dir_, origin)) return *bad;
  Bytes key = encode_record_key(kind, origin);
  return find(store_->dbs_.records, key, kRecordsDb);
}

Result<std::optional<Bytes>, StoreError> TxnReader::get_record(std::uint8_t kind,
                                                               std::string_view origin) const {
  return copy_out(find_record(kind, origin));
}

Result<std::optional<Bytes>, StoreError> TxnReader::get_roster() const {
  return copy_out(find(store_->dbs_.roster, as_bytes(kRosterKey), kRosterDb));
}

Result<std::optional<ByteView>, StoreError> TxnReader::find_state(std::string_view key) const {
  if (auto bad = check_state_key(store_->dir_, key)) return *bad;
  return find(store_->dbs_.state, as_bytes(key), kStateDb);
}

Result<std::optional<Bytes>, StoreError> TxnReader::get_state(std::string_view key) const {
  return copy_out(find_state(key));
}

Status<StoreError> TxnReader::for_each_record(const RecordVisitor& visit) const {
  return scan(std::nullopt, visit);
}

Status<StoreError> TxnReader::for_each_record_of_kind(std::uint8_t kind,
                                                      const RecordVisitor& visit) const {
  return scan(kind, visit);
}

Status<StoreError> TxnReader::scan(std::optional<std::uint8_t> kind,
                                   const RecordVisitor& visit) const {
  if (auto failed = check_usable()) return *failed;
  MDB_cursor* cursor = nullptr;
  int rc = mdb_cursor_open(txn_, store_->dbs_.records, &cursor);
  if (rc != 0) return lmdb_error(store_->dir_, "mdb_cursor_open(records)", rc);
  CursorCloser closer{cursor};
  std::uint8_t first_key = kind.value_or(0);
  MDB_val key{1, &first_key};
  MDB_val value{};
  rc = mdb_cursor_get(cursor, &key, &value, kind ? MDB_SET_RANGE : MDB_FIRST);
  for (; rc == 0; rc = mdb_cursor_get(cursor, &key, &value, MDB_NEXT)) {
    auto decoded = decode_record_key(to_view(key));
    if (!decoded) {
      return store_error(StoreError::corrupt, store_->dir_,
                         "records key of " + std::to_string(key.mv_size) + " bytes");
    }
    if (kind && decoded->kind != *kind) return Ok{};
    visit(decoded->kind, decoded->origin, to_view(value));
  }
  if (rc != MDB_NOTFOUND) return lmdb_error(store_->dir_, "mdb_cursor_get(records)", rc);
  return Ok{};
}

Status<StoreError> TxnReader::for_each_state(const StateVisitor& visit) const {
  if (auto failed = check_usable()) return *failed;
  MDB_cursor* cursor = nullptr;
  int rc = mdb_cursor_open(txn_, store_->dbs_.state, &cursor);
  if (rc != 0) return lmdb_error(store_->dir_, "mdb_cursor_open(state)", rc);
  CursorCloser closer{cursor};
  MDB_val key{};
  MDB_val value{};
  for (rc = mdb_cursor_get(cursor, &key, &value, MDB_FIRST); rc == 0;
       rc = mdb_cursor_get(cursor, &key, &value, MDB_NEXT)) {
    if (key.mv_size == 0 || key.mv_size > kStateKeyBytesMax) {
      return store_error(StoreError::corrupt, store_->dir_,
                         "state key of " + std::to_string(key.mv_size) + " bytes");
    }
    visit(std::string_view(static_cast<const char*>(key.mv_data), key.mv_size), to_view(value));
  }
  if (rc != MDB_NOTFOUND) return lmdb_error(store_->dir_, "mdb_cursor_get(state)", rc);
  return Ok{};
}

// ---- ReadTxn ----

ReadTxn::ReadTxn(const Store* store, MDB_txn* txn) : TxnReader(store, txn) {}

ReadTxn::~ReadTxn() {
  if (txn_ == nullptr) return;  // moved from
  mdb_txn_abort(txn_);
  store_->live_txns_.fetch_sub(1);
}

// ---- WriteTxn ----

WriteTxn::WriteTxn(Store* store, MDB_txn* txn) : TxnReader(store, txn) {}

WriteTxn::WriteTxn(WriteTxn&& other) noexcept : TxnReader(std::move(other)) {}

WriteTxn::~WriteTxn() {
  if (txn_ == nullptr) return;  // committed, failed or moved from
  finish(false);
}

int WriteTxn::finish(bool commit) {
  MESH_CHECK(store_->writer_thread_.load() == std::this_thread::get_id(),
             "WriteTxn ended on a thread other than the one that began it");
  // Cleared while LMDB's writer lock is still held: once the lock is free,
  // the next writer (another thread) sets its own id.
  store_->writer_thread_.store(std::thread::id{});
  MDB_txn* txn = std::exchange(txn_, nullptr);
  int rc = 0;
  if (commit) {
    // Snapshot order (store.h): readers retry a begin that overlapped this.
    std::lock_guard<std::mutex> committing(store_->commit_mutex_);
    store_->commit_seq_.fetch_add(1);
    rc = mdb_txn_commit(txn);  // frees the transaction whatever the outcome
    store_->commit_seq_.fetch_add(1);
  } else {
    mdb_txn_abort(txn);
  }
  store_->live_txns_.fetch_sub(1);
  return rc;
}

Error<StoreError> WriteTxn::fail(Error<StoreError> error) {
  finish(false);
  failure_ = error;
  return error;
}

Status<StoreError> WriteTxn::put(unsigned dbi, const char* db_name, ByteView key,
                                 ByteView value) {
  if (auto failed = check_usable()) return *failed;
  MDB_val k = to_val(key);
  MDB_val v = to_val(value);
  int rc = mdb_put(txn_, dbi, &k, &v, 0);
  if (rc != 0) return fail(lmdb_error(store_->dir_, std::string("mdb_put(") + db_name + ")", rc));
  return Ok{};
}

Status<StoreError> WriteTxn::erase(unsigned dbi, const char* db_name, ByteView key) {
  if (auto failed = check_usable()) return *failed;
  MDB_val k = to_val(key);
  int rc = mdb_del(txn_, dbi, &k, nullptr);
  if (rc == MDB_NOTFOUND) return Ok{};
  if (rc != 0) return fail(lmdb_error(store_->dir_, std::string("mdb_del(") + db_name + ")", rc));
  return Ok{};
}

Status<StoreError> WriteTxn::put_record(std::uint8_t kind, std::string_view origin,
                                        ByteView record) {
  if (auto bad = check_origin(store_->dir_, origin)) return *bad;
  if (auto bad = check_record(store_->dir_, record)) return *bad;
  return put(store_->dbs_.records, kRecordsDb, encode_record_key(kind, origin), record);
}

Status<StoreError> WriteTxn::delete_record(std::uint8_t kind, std::string_view origin) {
  if (auto bad = check_origin(store_->dir_, origin)) return *bad;
  return erase(store_->dbs_.records, kRecordsDb, encode_record_key(kind, origin));
}

Status<StoreError> WriteTxn::put_roster(ByteView record) {
  if (auto bad = check_record(store_->dir_, record)) return *bad;
  return put(store_->dbs_.roster, kRosterDb, as_bytes(kRosterKey), record);
}

Status<StoreError> WriteTxn::put_state(std::string_view key, ByteView value) {
  if (auto bad = check_state_key(store_->dir_, key)) return *bad;
  if (value.size() > kStateValueBytesMax) {
    return store_error(StoreError::too_large, store_->dir_,
                       "state value of " + std::to_string(value.size()) + " bytes, max " +
                           std::to_string(kStateValueBytesMax));
  }
  return put(store_->dbs_.state, kStateDb, as_bytes(key), value);
}

Status<StoreError> WriteTxn::delete_state(std::string_view key) {
  if (auto bad = check_state_key(store_->dir_, key)) return *bad;
  return erase(store_->dbs_.state, kStateDb, as_bytes(key));
}

Status<StoreError> WriteTxn::commit() {
  if (auto failed = check_usable()) return *failed;
  int rc = finish(true);
  if (rc != 0) {
    failure_ = lmdb_error(store_->dir_, "mdb_txn_commit", rc);
    return *failure_;
  }
  return Ok{};
}

}  // namespace mesh

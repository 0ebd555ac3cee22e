#include "storage/store.h"

#include <algorithm>

#include <lmdb.h>
#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <string>
#include <thread>
#include <type_traits>

#include "common/check.h"
#include "storage/lmdb_error.h"
#include "storage/txn.h"

namespace mesh {

static_assert(std::is_same_v<MDB_dbi, unsigned>, "DatabaseHandles assumes MDB_dbi is unsigned");

namespace {

constexpr mode_t kDirMode = 0700;
constexpr mdb_mode_t kFileMode = 0600;
constexpr const char* kDataFile = "/data.mdb";

enum class PathKind { missing, directory, other };

PathKind path_kind(const std::string& path) {
  struct stat info {};
  if (::stat(path.c_str(), &info) != 0) return PathKind::missing;
  return S_ISDIR(info.st_mode) ? PathKind::directory : PathKind::other;
}

// mkdir -p with mode 0700 for every directory it creates.
Status<StoreError> make_dirs(const std::string& dir) {
  for (std::size_t end = 1; end <= dir.size(); ++end) {
    if (end != dir.size() && dir[end] != '/') continue;
    std::string prefix = dir.substr(0, end);
    if (::mkdir(prefix.c_str(), kDirMode) != 0 && errno != EEXIST) {
      return lmdb_error(dir, "mkdir " + prefix, errno);
    }
  }
  if (path_kind(dir) != PathKind::directory) {
    return store_error(StoreError::io, dir, "exists and is not a directory");
  }
  return Ok{};
}

// Decides whether `dir` may be opened with `options`, creating it if allowed.
Status<StoreError> prepare_dir(const std::string& dir, const StoreOptions& options) {
  if (dir.empty()) return store_error(StoreError::invalid_argument, dir, "empty store path");
  PathKind kind = path_kind(dir);
  if (kind == PathKind::other) {
    return store_error(StoreError::io, dir, "exists and is not a directory");
  }
  bool may_create = options.create_if_missing && !options.read_only;
  if (kind == PathKind::missing) {
    if (!may_create) return store_error(StoreError::not_found, dir, "no such store directory");
    return make_dirs(dir);
  }
  if (!may_create && path_kind(dir + kDataFile) == PathKind::missing) {
    return store_error(StoreError::not_found, dir, "no store in this directory (no data.mdb)");
  }
  return Ok{};
}

Result<MDB_env*, StoreError> open_env(const std::string& dir, const StoreOptions& options) {
  MDB_env* env = nullptr;
  int rc = mdb_env_create(&env);
  if (rc != 0) return lmdb_error(dir, "mdb_env_create", rc);
  // A reader adopts the writer's map size (0: take it from the file).
  std::uint64_t map_size = options.read_only ? 0 : options.map_size_bytes;
  unsigned flags = MDB_NOTLS | (options.read_only ? MDB_RDONLY : 0u);
  auto failed = [&](const char* step, int code) {
    mdb_env_close(env);  // required even after a failed mdb_env_open
    return lmdb_error(dir, step, code);
  };
  if ((rc = mdb_env_set_maxdbs(env, kDatabasesMax)) != 0) return failed("mdb_env_set_maxdbs", rc);
  if ((rc = mdb_env_set_maxreaders(env, kReadersMax)) != 0) {
    return failed("mdb_env_set_maxreaders", rc);
  }
  if ((rc = mdb_env_set_mapsize(env, map_size)) != 0) return failed("mdb_env_set_mapsize", rc);
  if ((rc = mdb_env_open(env, dir.c_str(), flags, kFileMode)) != 0) {
    return failed("mdb_env_open", rc);
  }
  return env;
}

// Reads and checks the schema version. nullopt: the meta database holds none.
Result<std::optional<std::uint32_t>, StoreError> read_schema_version(const std::string& dir,
                                                                     MDB_txn* txn,
                                                                     MDB_dbi meta) {
  MDB_val key{kSchemaVersionKey.size(), const_cast<char*>(kSchemaVersionKey.data())};
  MDB_val value{};
  int rc = mdb_get(txn, meta, &key, &value);
  if (rc == MDB_NOTFOUND) return std::optional<std::uint32_t>{};
  if (rc != 0) return lmdb_error(dir, "mdb_get(meta, schema_version)", rc);
  if (value.mv_size != 4) {
    return store_error(StoreError::corrupt, dir,
                       "schema version is " + std::to_string(value.mv_size) +
                           " bytes, expected 4");
  }
  const auto* b = static_cast<const std::uint8_t*>(value.mv_data);
  std::uint32_t version = std::uint32_t{b[0]} << 24 | std::uint32_t{b[1]} << 16 |
                          std::uint32_t{b[2]} << 8 | std::uint32_t{b[3]};
  if (version != kSchemaVersion) {
    return store_error(StoreError::schema_mismatch, dir,
                       "schema version " + std::to_string(version) + " found, this build reads " +
                           std::to_string(kSchemaVersion) + "; the store was left untouched");
  }
  return std::optional<std::uint32_t>{version};
}

Status<StoreError> write_schema_version(const std::string& dir, MDB_txn* txn, MDB_dbi meta) {
  std::uint8_t bytes[4] = {static_cast<std::uint8_t>(kSchemaVersion >> 24),
                           static_cast<std::uint8_t>(kSchemaVersion >> 16),
                           static_cast<std::uint8_t>(kSchemaVersion >> 8),
                           static_cast<std::uint8_t>(kSchemaVersion)};
  MDB_val key{kSchemaVersionKey.size(), const_cast<char*>(kSchemaVersionKey.data())};
  MDB_val value{sizeof bytes, bytes};
  int rc = mdb_put(txn, meta, &key, &value, 0);
  if (rc != 0) return lmdb_error(dir, "mdb_put(meta, schema_version)", rc);
  return Ok{};
}

// True when the main database holds nothing: no named database exists yet.
Result<bool, StoreError> is_fresh(const std::string& dir, MDB_txn* txn) {
  MDB_dbi main_db = 0;
  int rc = mdb_dbi_open(txn, nullptr, 0, &main_db);
  MDB_stat stat{};
  if (rc == 0) rc = mdb_stat(txn, main_db, &stat);
  if (rc != 0) return lmdb_error(dir, "mdb_stat(main)", rc);
  return stat.ms_entries == 0;
}

// Opens the meta database and checks (or, on a fresh writable store, writes)
// the schema version.
Result<MDB_dbi, StoreError> open_meta(const std::string& dir, MDB_txn* txn, bool read_only) {
  MDB_dbi meta = 0;
  int rc = mdb_dbi_open(txn, kMetaDb, 0, &meta);
  if (rc == MDB_NOTFOUND && read_only) {
    return store_error(StoreError::not_found, dir, "no meta database (store never initialised)");
  }
  if (rc == MDB_NOTFOUND) {
    auto fresh = is_fresh(dir, txn);
    if (!fresh) return fresh.error();
    if (!fresh.value()) {
      return store_error(StoreError::corrupt, dir,
                         "holds databases but no meta database; refusing to initialise it");
    }
    rc = mdb_dbi_open(txn, kMetaDb, MDB_CREATE, &meta);
  }
  if (rc != 0) return lmdb_error(dir, "mdb_dbi_open(meta)", rc);
  auto version = read_schema_version(dir, txn, meta);
  if (!version) return version.error();
  if (version.value()) return meta;
  if (read_only) return store_error(StoreError::not_found, dir, "no schema version in meta");
  auto written = write_schema_version(dir, txn, meta);
  if (!written) return written.error();
  return meta;
}

Result<DatabaseHandles, StoreError> open_databases(const std::string& dir, MDB_txn* txn,
                                                   bool read_only) {
  auto meta = open_meta(dir, txn, read_only);
  if (!meta) return meta.error();
  DatabaseHandles handles;
  handles.meta = meta.value();
  unsigned flags = read_only ? 0u : unsigned{MDB_CREATE};
  struct Named {
    const char* name;
    unsigned* handle;
  };
  for (Named db : {Named{kRosterDb, &handles.roster}, Named{kRecordsDb, &handles.records},
                   Named{kStateDb, &handles.state}}) {
    int rc = mdb_dbi_open(txn, db.name, flags, db.handle);
    if (rc != 0) return lmdb_error(dir, std::string("mdb_dbi_open(") + db.name + ")", rc);
  }
  return handles;
}

// Opens the databases in one transaction; its commit publishes the handles
// (and, on a fresh store, the schema version). Aborts on any failure.
Result<DatabaseHandles, StoreError> init_databases(const std::string& dir, MDB_env* env,
                                                   bool read_only) {
  MDB_txn* txn = nullptr;
  int rc = mdb_txn_begin(env, nullptr, read_only ? MDB_RDONLY : 0u, &txn);
  if (rc != 0) return lmdb_error(dir, "mdb_txn_begin(open)", rc);
  auto handles = open_databases(dir, txn, read_only);
  if (!handles) {
    mdb_txn_abort(txn);
    return handles.error();
  }
  rc = mdb_txn_commit(txn);
  if (rc != 0) return lmdb_error(dir, "mdb_txn_commit(open)", rc);
  return handles;
}

}  // namespace

Result<std::unique_ptr<Store>, StoreError> Store::open(const std::string& dir,
                                                       StoreOptions options) {
  if (!options.read_only && (options.map_size_bytes < kMapSizeBytesMin ||
                             options.map_size_bytes > kMapSizeBytesMax)) {
    return store_error(StoreError::invalid_argument, dir,
                       "map_size_bytes " + std::to_string(options.map_size_bytes) +
                           " outside [" + std::to_string(kMapSizeBytesMin) + ", " +
                           std::to_string(kMapSizeBytesMax) + "]");
  }
  auto prepared = prepare_dir(dir, options);
  if (!prepared) return prepared.error();
  auto env = open_env(dir, options);
  if (!env) return env.error();
  auto handles = init_databases(dir, env.value(), options.read_only);
  if (!handles) {
    mdb_env_close(env.value());
    return handles.error();
  }
  return std::unique_ptr<Store>(new Store(dir, options.read_only, env.value(), handles.value()));
}

Store::Store(std::string dir, bool read_only, MDB_env* env, DatabaseHandles handles)
    : dir_(std::move(dir)), read_only_(read_only), env_(env), dbs_(handles) {}

Store::~Store() {
  MESH_CHECK(live_txns_.load() == 0, "Store destroyed while a transaction is alive");
  mdb_env_close(env_);
}

Result<ReadTxn, StoreError> Store::begin_read() const {
  // Snapshot order (store.h): a begin that overlapped no commit of this
  // process is sound, and so is one no older than a snapshot this process
  // already read (another process's commits race LMDB 0.9.24's choice of
  // meta page too: a reader delayed across two of them can read the newer
  // and the next reader the older, tests/storage/process_test.cc).
  constexpr int kOptimisticTries = 4;
  constexpr int kBackInTimeTries = 64;
  MDB_txn* txn = nullptr;
  auto not_older = [&] {
    const std::size_t id = mdb_txn_id(txn);
    std::size_t newest = newest_read_txnid_.load();
    while (id > newest && !newest_read_txnid_.compare_exchange_weak(newest, id)) {
    }
    return id >= newest;
  };
  for (int attempt = 0; attempt < kOptimisticTries; ++attempt) {
    std::uint64_t before = commit_seq_.load();
    if (before % 2 != 0) continue;
    int rc = mdb_txn_begin(env_, nullptr, MDB_RDONLY, &txn);
    if (rc != 0) return lmdb_error(dir_, "mdb_txn_begin(read)", rc);
    if (commit_seq_.load() == before && not_older()) {
      live_txns_.fetch_add(1);
      return ReadTxn(this, txn);
    }
    mdb_txn_abort(txn);
  }
  std::lock_guard<std::mutex> no_commit(commit_mutex_);
  for (int attempt = 0;; ++attempt) {
    int rc = mdb_txn_begin(env_, nullptr, MDB_RDONLY, &txn);
    if (rc != 0) return lmdb_error(dir_, "mdb_txn_begin(read)", rc);
    if (not_older() || attempt + 1 >= kBackInTimeTries) break;
    mdb_txn_abort(txn);
    std::this_thread::yield();
  }
  live_txns_.fetch_add(1);
  return ReadTxn(this, txn);
}

Result<WriteTxn, StoreError> Store::begin_write() {
  if (read_only_) {
    return store_error(StoreError::read_only, dir_, "write transaction on a read-only store");
  }
  MESH_CHECK(writer_thread_.load() != std::this_thread::get_id(),
             "begin_write() on a thread that already holds a WriteTxn of this store");
  MDB_txn* txn = nullptr;
  int rc = mdb_txn_begin(env_, nullptr, 0, &txn);
  if (rc != 0) return lmdb_error(dir_, "mdb_txn_begin(write)", rc);
  writer_thread_.store(std::this_thread::get_id());
  live_txns_.fetch_add(1);
  return WriteTxn(this, txn);
}

Result<std::uint64_t, StoreError> Store::next_boot_counter(std::uint64_t floor) {
  auto txn = begin_write();
  if (!txn) return txn.error();
  auto current = txn->find_state(kBootCounterKey);
  if (!current) return current.error();
  std::uint64_t counter = 0;
  if (current.value()) {
    ByteView bytes = *current.value();
    if (bytes.size() != 8) {
      return store_error(StoreError::corrupt, dir_,
                         "boot counter is " + std::to_string(bytes.size()) + " bytes, expected 8");
    }
    for (std::uint8_t b : bytes) counter = counter << 8 | b;
  }
  if (counter == UINT64_MAX) return store_error(StoreError::corrupt, dir_, "boot counter exhausted");
  counter = std::max(counter + 1, floor);
  std::uint8_t encoded[8];
  for (int i = 0; i < 8; ++i) encoded[i] = static_cast<std::uint8_t>(counter >> (56 - 8 * i));
  auto put = txn->put_state(kBootCounterKey, ByteView(encoded, sizeof encoded));
  if (!put) return put.error();
  auto committed = txn->commit();
  if (!committed) return committed.error();
  return counter;
}

}  // namespace mesh

// Opening stores: creation, options, read-only opens, and the schema version
// check. Foreign or future stores are made with LMDB directly.
#include <lmdb.h>
#include <sys/stat.h>

#include <fstream>
#include <optional>
#include <set>
#include <string>

#include "storage/layout.h"
#include "tests/storage/test_util.h"

namespace mesh::test {
namespace {

// Opens `dir` with raw LMDB, runs `fn(txn, env)` in one write transaction
// and commits. Only while no Store has the directory open.
template <class Fn>
void with_raw_lmdb(const std::string& dir, Fn fn) {
  MDB_env* env = nullptr;
  REQUIRE(mdb_env_create(&env) == 0);
  REQUIRE(mdb_env_set_maxdbs(env, 8) == 0);
  REQUIRE(mdb_env_open(env, dir.c_str(), 0, 0600) == 0);
  MDB_txn* txn = nullptr;
  REQUIRE(mdb_txn_begin(env, nullptr, 0, &txn) == 0);
  fn(txn);
  REQUIRE(mdb_txn_commit(txn) == 0);
  mdb_env_close(env);
}

void raw_put(MDB_txn* txn, const char* db, std::string_view key, ByteView value) {
  MDB_dbi dbi = 0;
  REQUIRE(mdb_dbi_open(txn, db, MDB_CREATE, &dbi) == 0);
  MDB_val k{key.size(), const_cast<char*>(key.data())};
  MDB_val v{value.size(), const_cast<std::uint8_t*>(value.data())};
  REQUIRE(mdb_put(txn, dbi, &k, &v, 0) == 0);
}

std::optional<Bytes> raw_get(MDB_txn* txn, const char* db, std::string_view key) {
  MDB_dbi dbi = 0;
  if (mdb_dbi_open(txn, db, 0, &dbi) != 0) return std::nullopt;
  MDB_val k{key.size(), const_cast<char*>(key.data())};
  MDB_val v{};
  if (mdb_get(txn, dbi, &k, &v) != 0) return std::nullopt;
  const auto* data = static_cast<const std::uint8_t*>(v.mv_data);
  return Bytes(data, data + v.mv_size);
}

bool exists(const std::string& path) {
  struct stat info {};
  return ::stat(path.c_str(), &info) == 0;
}

void put_one_record(Store& store) {
  auto txn = store.begin_write();
  REQUIRE(txn.ok());
  REQUIRE(txn->put_record(2, "de-fra-1", filler(50, 7)).ok());
  REQUIRE(txn->commit().ok());
}

TEST_CASE("open creates missing directories with mode 0700 and writes the schema version") {
  TempDir dir;
  std::string path = dir.sub("a/b/store");
  { auto store = open_ok(path); }
  for (const std::string& made : {dir.sub("a"), dir.sub("a/b"), path}) {
    struct stat info {};
    REQUIRE(::stat(made.c_str(), &info) == 0);
    CHECK((info.st_mode & 0777) == 0700);
  }
  with_raw_lmdb(path, [](MDB_txn* txn) {
    CHECK(raw_get(txn, kMetaDb, kSchemaVersionKey) == Bytes{0, 0, 0, kSchemaVersion});
  });
}

TEST_CASE("without create_if_missing a missing store is not_found and nothing is created") {
  TempDir dir;
  StoreOptions options = read_write_options();
  options.create_if_missing = false;
  auto missing = Store::open(dir.sub("nope"), options);
  CHECK(missing.code() == StoreError::not_found);
  CHECK(missing.message().find(dir.sub("nope")) != std::string::npos);
  CHECK_FALSE(exists(dir.sub("nope")));
  auto empty_dir = Store::open(dir.path(), options);
  CHECK(empty_dir.code() == StoreError::not_found);
  CHECK_FALSE(exists(dir.sub("data.mdb")));
}

TEST_CASE("bad paths and options are clear errors") {
  TempDir dir;
  std::ofstream(dir.sub("file")) << "not a directory";
  CHECK(Store::open(dir.sub("file"), read_write_options()).code() == StoreError::io);
  CHECK(Store::open("", read_write_options()).code() == StoreError::invalid_argument);
  auto tiny = Store::open(dir.sub("s"), read_write_options(kMapSizeBytesMin - 1));
  CHECK(tiny.code() == StoreError::invalid_argument);
  CHECK(tiny.message().find("map_size_bytes") != std::string::npos);
  CHECK(Store::open(dir.sub("s"), read_write_options(kMapSizeBytesMax + 1)).code() ==
        StoreError::invalid_argument);
}

TEST_CASE("read-only open of a missing store is not_found and creates nothing") {
  TempDir dir;
  auto missing = Store::open(dir.sub("nope"), read_only_options());
  CHECK(missing.code() == StoreError::not_found);
  CHECK(missing.message().find(dir.sub("nope")) != std::string::npos);
  CHECK_FALSE(exists(dir.sub("nope")));
  // Even with create_if_missing: a reader never creates.
  StoreOptions options = read_only_options();
  options.create_if_missing = true;
  CHECK(Store::open(dir.path(), options).code() == StoreError::not_found);
  CHECK_FALSE(exists(dir.sub("data.mdb")));
}

TEST_CASE("read-only open of an LMDB environment without meta is not_found") {
  TempDir dir;
  with_raw_lmdb(dir.path(), [](MDB_txn*) {});
  auto store = Store::open(dir.path(), read_only_options());
  CHECK(store.code() == StoreError::not_found);
  CHECK(store.message().find("meta") != std::string::npos);
}

TEST_CASE("a read-only store reads what the writer committed and refuses writes") {
  TempDir dir;
  { put_one_record(*open_ok(dir.path())); }
  auto store = open_ok(dir.path(), read_only_options());
  CHECK(store->read_only());
  auto read = store->begin_read();
  REQUIRE(read.ok());
  CHECK(read->get_record(2, "de-fra-1").value() == filler(50, 7));
  auto write = store->begin_write();
  CHECK(write.code() == StoreError::read_only);
  CHECK(write.message().find(dir.path()) != std::string::npos);
}

TEST_CASE("an unknown schema version is schema_mismatch and the store is left untouched") {
  TempDir dir;
  { put_one_record(*open_ok(dir.path())); }
  const Bytes future = {0, 0, 0, 99};
  with_raw_lmdb(dir.path(), [&](MDB_txn* txn) { raw_put(txn, kMetaDb, kSchemaVersionKey, future); });

  auto writer = Store::open(dir.path(), read_write_options());
  REQUIRE_FALSE(writer.ok());
  CHECK(writer.code() == StoreError::schema_mismatch);
  CHECK(writer.message().find("99") != std::string::npos);
  CHECK(writer.message().find("reads " + std::to_string(kSchemaVersion)) != std::string::npos);
  CHECK(writer.message().find(dir.path()) != std::string::npos);
  CHECK(Store::open(dir.path(), read_only_options()).code() == StoreError::schema_mismatch);

  with_raw_lmdb(dir.path(), [&](MDB_txn* txn) {
    CHECK(raw_get(txn, kMetaDb, kSchemaVersionKey) == future);
    Bytes key = encode_record_key(2, "de-fra-1");
    std::string key_text(key.begin(), key.end());
    CHECK(raw_get(txn, kRecordsDb, key_text) == filler(50, 7));
  });
}

TEST_CASE("a schema version of the wrong width is corrupt") {
  TempDir dir;
  { open_ok(dir.path()); }
  with_raw_lmdb(dir.path(), [](MDB_txn* txn) {
    raw_put(txn, kMetaDb, kSchemaVersionKey, Bytes{0, 1});
  });
  auto store = Store::open(dir.path(), read_write_options());
  CHECK(store.code() == StoreError::corrupt);
  CHECK(store.message().find("2 bytes") != std::string::npos);
}

TEST_CASE("a foreign LMDB environment without meta is refused, not initialised") {
  TempDir dir;
  with_raw_lmdb(dir.path(), [](MDB_txn* txn) { raw_put(txn, "other", "k", filler(4, 1)); });
  auto store = Store::open(dir.path(), read_write_options());
  CHECK(store.code() == StoreError::corrupt);
  with_raw_lmdb(dir.path(), [](MDB_txn* txn) {
    CHECK_FALSE(raw_get(txn, kMetaDb, kSchemaVersionKey).has_value());
    CHECK(raw_get(txn, "other", "k") == filler(4, 1));
  });
}

TEST_CASE("a data file that is not LMDB is corrupt") {
  TempDir dir;
  {
    std::ofstream out(dir.sub("data.mdb"), std::ios::binary);
    Bytes garbage = filler(16384, 3);
    out.write(reinterpret_cast<const char*>(garbage.data()), std::streamsize(garbage.size()));
  }
  auto store = Store::open(dir.path(), read_write_options());
  CHECK(store.code() == StoreError::corrupt);
  CHECK(store.message().find("mdb_env_open") != std::string::npos);
  CHECK(Store::open(dir.path(), read_only_options()).code() == StoreError::corrupt);
}

TEST_CASE("every error code has its own name") {
  std::set<std::string> names;
  for (StoreError e : {StoreError::io, StoreError::not_found, StoreError::schema_mismatch,
                       StoreError::map_full, StoreError::too_large, StoreError::invalid_argument,
                       StoreError::corrupt, StoreError::read_only, StoreError::busy}) {
    names.insert(to_string(e));
  }
  CHECK(names.size() == 9);
  CHECK(names.count("unknown") == 0);
}

}  // namespace
}  // namespace mesh::test

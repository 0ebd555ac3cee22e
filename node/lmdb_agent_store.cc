#include "node/lmdb_agent_store.h"

#include <algorithm>
#include <filesystem>
#include <system_error>

#include "storage/txn.h"

namespace mesh::node {
namespace {

Error<StoreError> dir_error(StoreError code, const std::string& dir, const std::string& what) {
  return make_error(code, "data dir '" + dir + "': " + what);
}

// The data dir exists, is a directory, and holds nothing but a store's files.
Status<StoreError> check_dir(const std::string& dir) {
  namespace fs = std::filesystem;
  std::error_code ec;
  const fs::file_status status = fs::status(dir, ec);
  if (ec || !fs::exists(status)) {
    return dir_error(StoreError::not_found, dir,
                     "does not exist (create it, mode 0700, owned by the user meshnode runs as)");
  }
  if (!fs::is_directory(status)) return dir_error(StoreError::invalid_argument, dir, "is not a directory");
  for (const auto& entry : fs::directory_iterator(dir, ec)) {
    const std::string name = entry.path().filename().string();
    if (name != "data.mdb" && name != "lock.mdb") {
      return dir_error(StoreError::corrupt, dir,
                       "holds '" + name + "', not a meshnode store (use an empty directory)");
    }
  }
  if (ec) return dir_error(StoreError::io, dir, "cannot be listed: " + ec.message());
  return Ok{};
}

Bytes identity_of(const std::string& node_id, const PublicKey& key) {
  Bytes identity(node_id.begin(), node_id.end());
  identity.push_back(0);
  identity.insert(identity.end(), key.begin(), key.end());
  return identity;
}

// Stamps a fresh store with the identity, or checks the one it holds.
Status<StoreError> check_identity(Store& store, const std::string& node_id, const PublicKey& key) {
  const Bytes expected = identity_of(node_id, key);
  auto txn = store.begin_write();
  if (!txn) return txn.error();
  auto held = txn->get_state(kNodeIdentityKey);
  if (!held) return held.error();
  if (held->has_value()) {
    if (**held == expected) return Ok{};
    const Bytes& other = **held;
    const auto nul = std::find(other.begin(), other.end(), std::uint8_t{0});
    return dir_error(StoreError::invalid_argument, store.path(),
                     "belongs to node '" + std::string(other.begin(), nul) +
                         "' (or to another key of this node); each node needs its own data dir");
  }
  auto put = txn->put_state(kNodeIdentityKey, expected);
  if (!put) return put.error();
  return txn->commit();
}

}  // namespace

Result<std::unique_ptr<LmdbAgentStore>, StoreError> LmdbAgentStore::open(const std::string& dir,
                                                                          const std::string& node_id,
                                                                          const PublicKey& node_key) {
  auto checked = check_dir(dir);
  if (!checked) return checked.error();
  StoreOptions options;
  options.create_if_missing = true;
  auto store = Store::open(dir, options);
  if (!store) return store.error();
  auto identity = check_identity(**store, node_id, node_key);
  if (!identity) return identity.error();
  return std::unique_ptr<LmdbAgentStore>(new LmdbAgentStore(std::move(store.value())));
}

agent::StoreFailure LmdbAgentStore::fail(const Error<StoreError>& error) {
  last_error_ = error.message;
  switch (error.code) {
    case StoreError::map_full: return agent::StoreFailure::full;
    case StoreError::corrupt: return agent::StoreFailure::corrupt;
    default: return agent::StoreFailure::io;
  }
}

Result<agent::StoredState, agent::StoreFailure> LmdbAgentStore::load() {
  auto txn = store_->begin_read();
  if (!txn) return make_error(fail(txn.error()), txn.message());
  agent::StoredState stored;
  auto roster = txn->get_roster();
  if (!roster) return make_error(fail(roster.error()), roster.message());
  if (roster->has_value()) stored.records.push_back(std::move(**roster));
  auto records = txn->for_each_record([&](std::uint8_t, std::string_view, ByteView raw) {
    stored.records.emplace_back(raw.begin(), raw.end());
  });
  if (!records) return make_error(fail(records.error()), records.message());
  auto state = txn->for_each_state([&](std::string_view key, ByteView value) {
    stored.state.emplace(std::string(key), Bytes(value.begin(), value.end()));
  });
  if (!state) return make_error(fail(state.error()), state.message());
  return stored;
}

Status<agent::StoreFailure> LmdbAgentStore::apply(const agent::StoreBatch& batch) {
  if (batch.empty()) return Ok{};
  auto written = write(batch);
  if (!written) return make_error(fail(written.error()), written.message());
  return Ok{};
}

// Puts before erases, as MemoryStore does; all in one transaction, which
// the WriteTxn destructor aborts on any failure.
Status<StoreError> LmdbAgentStore::write(const agent::StoreBatch& batch) {
  auto txn = store_->begin_write();
  if (!txn) return txn.error();
  for (const auto& record : batch.put_records) {
    auto put = record.kind == RecordKind::roster
                   ? txn->put_roster(*record.raw)
                   : txn->put_record(static_cast<std::uint8_t>(record.kind), record.origin, *record.raw);
    if (!put) return put.error();
  }
  for (const auto& [kind, origin] : batch.erase_records) {
    if (kind == RecordKind::roster) continue;  // a roster is only ever replaced
    auto erased = txn->delete_record(static_cast<std::uint8_t>(kind), origin);
    if (!erased) return erased.error();
  }
  for (const auto& [key, value] : batch.put_state) {
    auto put = txn->put_state(key, value);
    if (!put) return put.error();
  }
  for (const auto& key : batch.erase_state) {
    auto erased = txn->delete_state(key);
    if (!erased) return erased.error();
  }
  return txn->commit();
}

}  // namespace mesh::node

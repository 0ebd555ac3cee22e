// The agent's storage on LMDB (node/agent/store.h; docs/STORAGE.md): the
// roster in `roster`, reports in `records`, the agent's state values in
// `state`, each batch in one write transaction. It also checks, at open,
// that the data dir is this node's: a missing directory, files that are not
// a meshnode store, another schema, or another node's identity is a clear
// error naming the directory, and nothing is written then.
//
// Thread safety: one thread (the daemon's agent strand) uses it.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "common/result.h"
#include "node/agent/store.h"
#include "record/keys.h"
#include "storage/store.h"

namespace mesh::node {

class LmdbAgentStore final : public agent::AgentStore {
 public:
  // Opens the store in `dir` for node `node_id` with key `node_key`. The
  // directory must exist; an empty one gets a fresh store stamped with the
  // identity. Errors: the message says what is wrong and where.
  static Result<std::unique_ptr<LmdbAgentStore>, StoreError> open(const std::string& dir,
                                                                  const std::string& node_id,
                                                                  const PublicKey& node_key);

  Result<agent::StoredState, agent::StoreFailure> load() override;
  Status<agent::StoreFailure> apply(const agent::StoreBatch& batch) override;

  // Store::next_boot_counter (docs/STORAGE.md, "Boot counter").
  Result<std::uint64_t, StoreError> next_boot_counter(std::uint64_t floor) { return store_->next_boot_counter(floor); }
  // Why the last load() or apply() failed.
  const std::string& last_error() const { return last_error_; }
  const std::string& path() const { return store_->path(); }

 private:
  explicit LmdbAgentStore(std::unique_ptr<Store> store) : store_(std::move(store)) {}
  agent::StoreFailure fail(const Error<StoreError>& error);
  Status<StoreError> write(const agent::StoreBatch& batch);

  std::unique_ptr<Store> store_;
  std::string last_error_;
};

}  // namespace mesh::node

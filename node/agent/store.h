// The agent's storage, behind the narrowest interface that keeps a node
// whole across restarts: load everything at start, apply one batch of puts
// and erases atomically after each event. The daemon implements it on LMDB
// (node/lmdb_agent_store.h); meshsim and the tests keep it in memory
// (MemoryStore below). What the keys hold is in docs/STORAGE.md.
#pragma once

#include <map>
#include <string>
#include <utility>
#include <vector>

#include "common/bytes.h"
#include "common/result.h"
#include "node/agent/effects.h"
#include "record/envelope.h"

namespace mesh::agent {

// Everything a node stored: its records (roster and reports, the exact
// bytes received) and its state values by key.
struct StoredState {
  std::vector<Bytes> records;
  std::map<std::string, Bytes, std::less<>> state;
};

enum class StoreFailure {
  io,       // the medium failed; the batch was not applied
  corrupt,  // what is stored cannot be read back
  full,     // no room left; the batch was not applied
};

class AgentStore {
 public:
  virtual ~AgentStore() = default;
  // Everything stored, as of the last applied batch.
  virtual Result<StoredState, StoreFailure> load() = 0;
  // Applies every put and erase of `batch`, or none of them. Erasing what is
  // absent is not an error. Records put under (kind, origin) replace the
  // one stored there.
  virtual Status<StoreFailure> apply(const StoreBatch& batch) = 0;
};

// In memory: for meshsim (the storage model of a simulated node) and tests.
class MemoryStore final : public AgentStore {
 public:
  Result<StoredState, StoreFailure> load() override;
  Status<StoreFailure> apply(const StoreBatch& batch) override;

  std::size_t record_count() const { return records_.size(); }
  bool empty() const { return records_.empty() && state_.empty(); }

 private:
  std::map<std::pair<RecordKind, ServerId>, Bytes> records_;
  std::map<std::string, Bytes, std::less<>> state_;
};

}  // namespace mesh::agent

#include "node/agent/store.h"

namespace mesh::agent {

Result<StoredState, StoreFailure> MemoryStore::load() {
  StoredState stored;
  stored.records.reserve(records_.size());
  for (const auto& [key, raw] : records_) stored.records.push_back(raw);
  stored.state = state_;
  return stored;
}

Status<StoreFailure> MemoryStore::apply(const StoreBatch& batch) {
  for (const auto& put : batch.put_records) {
    records_[{put.kind, ServerId(put.origin)}] = *put.raw;
  }
  for (const auto& key : batch.erase_records) records_.erase(key);
  for (const auto& [key, value] : batch.put_state) state_[key] = value;
  for (const auto& key : batch.erase_state) state_.erase(key);
  return Ok{};
}

}  // namespace mesh::agent

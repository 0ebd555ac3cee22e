// Outbox: what the core will send each peer at the next tick, batched into
// one frame per peer per tick (docs/PROTOCOL.md, Gossip, "Batching"). Control messages
// always go; bodies fill the frame up to the budget and the rest waits. Body
// bytes per peer are bounded: over the bound a body is refused (the caller
// counts it) and SYNC repairs it later.
#pragma once

#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <optional>
#include <utility>
#include <vector>

#include "common/bytes.h"
#include "gossip/wire.h"

namespace mesh::gossip {

class Outbox {
 public:
  // False (nothing queued) when the peer's queued body bytes would pass `bytes_max`.
  bool add_body(std::uint32_t peer, std::shared_ptr<const Bytes> raw, bool repair,
                std::size_t bytes_max);
  // List entries beyond kEntriesPerListMax per peer are dropped; returns how many.
  std::size_t add_ihave(std::uint32_t peer, const std::vector<Entry>& entries);
  void add_graft(std::uint32_t peer, const Entry& entry);
  void add_prune(std::uint32_t peer, const Entry& entry);
  void set_sync(std::uint32_t peer, std::vector<Entry> digest);
  void set_sync_reply(std::uint32_t peer, std::vector<Entry> wanted);

  // Everything that fits `budget_bytes` per peer (a lone oversize body still
  // goes), peers ascending. Content left over stays queued.
  std::vector<std::pair<std::uint32_t, FrameContent>> drain(std::size_t budget_bytes,
                                                            std::uint64_t roster_version);
  void clear() { queues_.clear(); }
  bool empty() const { return queues_.empty(); }

 private:
  struct QueuedBody {
    std::shared_ptr<const Bytes> raw;
    bool repair = false;
  };
  struct PeerQueue {
    std::deque<QueuedBody> bodies;
    std::size_t body_bytes = 0;
    std::vector<Entry> ihave;
    std::vector<Entry> graft;
    std::vector<Entry> prune;
    std::optional<std::vector<Entry>> sync;
    std::optional<std::vector<Entry>> sync_reply;
    bool empty() const;
  };
  static FrameContent take(PeerQueue& queue, std::size_t budget_bytes, std::uint64_t version);

  std::map<std::uint32_t, PeerQueue> queues_;
};

}  // namespace mesh::gossip

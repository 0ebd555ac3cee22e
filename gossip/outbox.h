// Outbox: what the core will send each peer at the next tick, batched into
// one frame per peer per tick (docs/PROTOCOL.md, Gossip, "Batching"). Control messages
// always go; bodies fill the frame up to the budget and the rest waits. Body
// bytes per peer are bounded: over the bound a body is refused (the caller
// counts it) and SYNC repairs it later.
//
// Queues stay allocated between ticks (a node talks to a bounded set of
// peers: its links and SYNC partners), so a steady flow of frames costs no
// allocation per peer per tick.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <utility>
#include <vector>

#include "common/bytes.h"
#include "gossip/wire.h"

namespace mesh::gossip {

class Outbox {
 public:
  // Empty queues kept for reuse; beyond this many queues, empty ones are freed.
  static constexpr std::size_t kIdleQueuesMax = 64;

  // False (nothing queued) when the peer's queued body bytes would pass `bytes_max`.
  bool add_body(std::uint32_t peer, std::shared_ptr<const Bytes> raw, bool repair,
                std::size_t bytes_max);
  // An entry beyond kEntriesPerListMax per peer is dropped; returns how many were (0 or 1).
  std::size_t add_ihave(std::uint32_t peer, const Entry& entry);
  void add_graft(std::uint32_t peer, const Entry& entry);
  void add_prune(std::uint32_t peer, const Entry& entry);
  void set_summary(std::uint32_t peer, const Summary& summary);
  void set_sync(std::uint32_t peer, std::vector<Entry> digest);
  void set_sync_reply(std::uint32_t peer, std::vector<Entry> wanted);
  // A frame for `peer` at the next drain even with nothing else queued (a
  // keepalive: an empty frame says the link is alive).
  void touch(std::uint32_t peer);

  // Calls emit(peer, const FrameContent&) for every peer with something
  // queued, peers ascending, with everything that fits `budget_bytes` (a
  // lone oversize body still goes). Content left over stays queued. The
  // content is valid only during the call.
  template <class Emit>
  void drain(std::size_t budget_bytes, std::uint64_t roster_version, Emit&& emit) {
    for (PeerQueue& queue : queues_) {
      if (queue.empty()) continue;
      take(queue, budget_bytes, roster_version);
      emit(queue.peer, scratch_);
      give_back(queue);
    }
    trim();
  }
  void clear() { queues_.clear(); }
  bool empty() const;

 private:
  struct QueuedBody {
    std::shared_ptr<const Bytes> raw;
    bool repair = false;
  };
  struct PeerQueue {
    std::uint32_t peer = 0;
    std::vector<QueuedBody> bodies;  // from `head` on
    std::size_t head = 0;
    std::size_t body_bytes = 0;
    std::vector<Entry> ihave;
    std::vector<Entry> graft;
    std::vector<Entry> prune;
    std::optional<Summary> summary;
    std::optional<std::vector<Entry>> sync;
    std::optional<std::vector<Entry>> sync_reply;
    bool touched = false;
    bool empty() const;
  };
  PeerQueue& queue(std::uint32_t peer);
  // Moves what fits into scratch_; give_back returns the emptied lists
  // (their capacity) to the queue.
  void take(PeerQueue& queue, std::size_t budget_bytes, std::uint64_t version);
  void give_back(PeerQueue& queue);
  void trim();

  std::vector<PeerQueue> queues_;  // sorted by peer
  FrameContent scratch_;
};

}  // namespace mesh::gossip

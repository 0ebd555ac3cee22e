#include "gossip/outbox.h"

#include <algorithm>

#include "gossip/config.h"

namespace mesh::gossip {

bool Outbox::PeerQueue::empty() const {
  return head == bodies.size() && ihave.empty() && graft.empty() && prune.empty() && !summary &&
         !sync && !sync_reply && !touched;
}

bool Outbox::empty() const {
  return std::all_of(queues_.begin(), queues_.end(), [](const PeerQueue& q) { return q.empty(); });
}

Outbox::PeerQueue& Outbox::queue(std::uint32_t peer) {
  auto it = std::lower_bound(queues_.begin(), queues_.end(), peer,
                             [](const PeerQueue& q, std::uint32_t p) { return q.peer < p; });
  if (it == queues_.end() || it->peer != peer) {
    it = queues_.insert(it, PeerQueue{});
    it->peer = peer;
  }
  return *it;
}

bool Outbox::add_body(std::uint32_t peer, std::shared_ptr<const Bytes> raw, bool repair,
                      std::size_t bytes_max) {
  PeerQueue& q = queue(peer);
  if (q.body_bytes + raw->size() > bytes_max) return false;
  q.body_bytes += raw->size();
  q.bodies.push_back(QueuedBody{std::move(raw), repair});
  return true;
}

std::size_t Outbox::add_ihave(std::uint32_t peer, const Entry& entry) {
  auto& list = queue(peer).ihave;
  if (list.size() >= kEntriesPerListMax) return 1;
  list.push_back(entry);
  return 0;
}

namespace {
void add_unique(std::vector<Entry>& list, const Entry& entry) {
  if (list.size() < kEntriesPerListMax && std::find(list.begin(), list.end(), entry) == list.end()) {
    list.push_back(entry);
  }
}
}  // namespace

void Outbox::add_graft(std::uint32_t peer, const Entry& entry) { add_unique(queue(peer).graft, entry); }
void Outbox::add_prune(std::uint32_t peer, const Entry& entry) { add_unique(queue(peer).prune, entry); }

void Outbox::set_summary(std::uint32_t peer, const Summary& summary) {
  queue(peer).summary = summary;
}

void Outbox::set_sync(std::uint32_t peer, std::vector<Entry> digest) {
  queue(peer).sync = std::move(digest);
}

void Outbox::set_sync_reply(std::uint32_t peer, std::vector<Entry> wanted) {
  queue(peer).sync_reply = std::move(wanted);
}

void Outbox::touch(std::uint32_t peer) { queue(peer).touched = true; }

void Outbox::take(PeerQueue& q, std::size_t budget_bytes, std::uint64_t version) {
  q.touched = false;
  FrameContent& content = scratch_;
  content.roster_version = version;
  content.prune.swap(q.prune);
  content.graft.swap(q.graft);
  content.ihave.swap(q.ihave);
  content.summary = std::exchange(q.summary, std::nullopt);
  content.sync = std::exchange(q.sync, std::nullopt);
  content.sync_reply = std::exchange(q.sync_reply, std::nullopt);
  // Control lists are small and always go; bodies fill what is left.
  std::size_t used = 16 + (content.summary ? kSummaryMessageBytes : 0) +
                     (content.graft.size() + content.ihave.size() + content.prune.size()) * kEntryBytesMax +
                     ((content.sync ? content.sync->size() : 0) +
                      (content.sync_reply ? content.sync_reply->size() : 0)) *
                         kSyncEntryBytesMax;
  while (q.head < q.bodies.size() && content.bodies.size() + 5 < kMessagesPerFrameMax) {
    QueuedBody& next = q.bodies[q.head];
    const std::size_t cost = body_bytes_max(next.raw->size());
    if (!content.bodies.empty() && used + cost > budget_bytes) break;
    if (content.bodies.empty() && used + cost > budget_bytes && used + cost > kFrameBytesMax - 64) break;
    used += cost;
    q.body_bytes -= next.raw->size();
    content.bodies.push_back(Body::owned(next.repair, std::move(next.raw)));
    ++q.head;
  }
  if (q.head == q.bodies.size()) {
    q.bodies.clear();  // keeps the capacity
    q.head = 0;
  }
}

void Outbox::give_back(PeerQueue& q) {
  FrameContent& content = scratch_;
  content.prune.clear();
  content.graft.clear();
  content.ihave.clear();
  content.prune.swap(q.prune);  // q's lists were emptied by take(): hand back the capacity
  content.graft.swap(q.graft);
  content.ihave.swap(q.ihave);
  content.summary.reset();
  content.sync.reset();
  content.sync_reply.reset();
  content.bodies.clear();  // releases the shared record bytes
}

void Outbox::trim() {
  if (queues_.size() <= kIdleQueuesMax) return;
  std::erase_if(queues_, [](const PeerQueue& q) { return q.empty(); });
}

}  // namespace mesh::gossip

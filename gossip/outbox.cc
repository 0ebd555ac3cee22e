#include "gossip/outbox.h"

#include <algorithm>

#include "gossip/config.h"

namespace mesh::gossip {

bool Outbox::PeerQueue::empty() const {
  return bodies.empty() && ihave.empty() && graft.empty() && prune.empty() && !sync && !sync_reply;
}

bool Outbox::add_body(std::uint32_t peer, std::shared_ptr<const Bytes> raw, bool repair,
                      std::size_t bytes_max) {
  PeerQueue& queue = queues_[peer];
  if (queue.body_bytes + raw->size() > bytes_max) {
    if (queue.empty()) queues_.erase(peer);
    return false;
  }
  queue.body_bytes += raw->size();
  queue.bodies.push_back(QueuedBody{std::move(raw), repair});
  return true;
}

std::size_t Outbox::add_ihave(std::uint32_t peer, const std::vector<Entry>& entries) {
  auto& list = queues_[peer].ihave;
  const std::size_t room = kEntriesPerListMax - std::min(kEntriesPerListMax, list.size());
  const std::size_t take = std::min(room, entries.size());
  list.insert(list.end(), entries.begin(), entries.begin() + static_cast<std::ptrdiff_t>(take));
  return entries.size() - take;
}

namespace {
void add_unique(std::vector<Entry>& list, const Entry& entry) {
  if (list.size() < kEntriesPerListMax && std::find(list.begin(), list.end(), entry) == list.end()) {
    list.push_back(entry);
  }
}
}  // namespace

void Outbox::add_graft(std::uint32_t peer, const Entry& entry) { add_unique(queues_[peer].graft, entry); }
void Outbox::add_prune(std::uint32_t peer, const Entry& entry) { add_unique(queues_[peer].prune, entry); }

void Outbox::set_sync(std::uint32_t peer, std::vector<Entry> digest) {
  queues_[peer].sync = std::move(digest);
}

void Outbox::set_sync_reply(std::uint32_t peer, std::vector<Entry> wanted) {
  queues_[peer].sync_reply = std::move(wanted);
}

FrameContent Outbox::take(PeerQueue& queue, std::size_t budget_bytes, std::uint64_t version) {
  FrameContent content;
  content.roster_version = version;
  content.prune = std::exchange(queue.prune, {});
  content.graft = std::exchange(queue.graft, {});
  content.ihave = std::exchange(queue.ihave, {});
  content.sync = std::exchange(queue.sync, std::nullopt);
  content.sync_reply = std::exchange(queue.sync_reply, std::nullopt);
  // Control lists are small and always go; bodies fill what is left.
  std::size_t used = 16 + (content.graft.size() + content.ihave.size() + content.prune.size()) * kEntryBytesMax +
                     ((content.sync ? content.sync->size() : 0) +
                      (content.sync_reply ? content.sync_reply->size() : 0)) *
                         kSyncEntryBytesMax;
  while (!queue.bodies.empty() && content.bodies.size() + 5 < kMessagesPerFrameMax) {
    const QueuedBody& next = queue.bodies.front();
    const std::size_t cost = body_bytes_max(next.raw->size());
    if (!content.bodies.empty() && used + cost > budget_bytes) break;
    if (content.bodies.empty() && used + cost > budget_bytes && used + cost > kFrameBytesMax - 64) break;
    used += cost;
    content.bodies.push_back(Body::owned(next.repair, next.raw));
    queue.body_bytes -= next.raw->size();
    queue.bodies.pop_front();
  }
  return content;
}

std::vector<std::pair<std::uint32_t, FrameContent>> Outbox::drain(std::size_t budget_bytes,
                                                                  std::uint64_t roster_version) {
  std::vector<std::pair<std::uint32_t, FrameContent>> out;
  for (auto it = queues_.begin(); it != queues_.end();) {
    FrameContent content = take(it->second, budget_bytes, roster_version);
    if (!content.empty()) out.emplace_back(it->first, std::move(content));
    it = it->second.empty() ? queues_.erase(it) : std::next(it);
  }
  return out;
}

}  // namespace mesh::gossip

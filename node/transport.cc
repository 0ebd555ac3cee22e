// The gossip transport's facade (node/transport.h): the registry of
// outgoing links by peer (on the daemon's strand) and the listener.
#include "node/transport.h"

#include <map>
#include <optional>
#include <set>
#include <string>
#include <utility>

#include <boost/asio/io_context.hpp>

#include "common/rng.h"
#include "common/shed_watch.h"
#include "node/listener.h"
#include "node/peer_link.h"
#include "node/transport_context.h"

namespace mesh::node {
namespace {

// FNV-1a 64 of a peer id: a stable label for the peer's jitter stream.
std::uint64_t peer_label(const ServerId& peer) {
  std::uint64_t hash = 0xcbf29ce484222325ull;
  for (const char c : peer) hash = (hash ^ static_cast<std::uint8_t>(c)) * 0x100000001b3ull;
  return hash;
}

std::optional<boost::asio::ip::address> parse_source(const std::string& text,
                                                     std::optional<Error<TransportError>>& error) {
  if (text.empty()) return std::nullopt;
  boost::system::error_code code;
  const auto address = boost::asio::ip::make_address(text, code);
  if (!code) return address;
  error = make_error(TransportError::bad_address,
                     "transport: source address \"" + text + "\" is not an IP literal");
  return std::nullopt;
}

}  // namespace

struct Transport::Impl {
  enum class Phase { created, started, stopped };

  Phase phase = Phase::created;
  std::optional<Error<TransportError>> settings_error;  // reported by start()
  std::uint64_t jitter_seed = 0;
  std::shared_ptr<TransportContext> context;
  std::shared_ptr<Listener> listener;
  std::map<ServerId, std::shared_ptr<PeerLink>> links;  // bounded by peer_links_max
  std::optional<std::chrono::steady_clock::time_point> last_retry;  // retry_now()
  ShedWatch shed_watch;  // shedding_change()

  // The link to `peer`, made when missing; null at peer_links_max.
  std::shared_ptr<PeerLink> link_to(const ServerId& peer, const Endpoint& to);
};

std::shared_ptr<PeerLink> Transport::Impl::link_to(const ServerId& peer, const Endpoint& to) {
  auto found = links.find(peer);
  if (found != links.end()) return found->second;
  if (links.size() >= context->settings.peer_links_max) return nullptr;
  auto link = std::make_shared<PeerLink>(context, peer, to, mix_seed(jitter_seed, peer_label(peer)));
  return links.emplace(peer, std::move(link)).first->second;
}

Transport::Transport(boost::asio::io_context& io, DaemonPost post_to_daemon,
                     TransportSettings settings, std::uint64_t jitter_seed,
                     TransportCallbacks callbacks)
    : impl_(std::make_unique<Impl>()) {
  impl_->jitter_seed = jitter_seed;
  auto source = parse_source(settings.source_address, impl_->settings_error);
  impl_->context = std::make_shared<TransportContext>(io, std::move(post_to_daemon), std::move(settings),
                                                      std::move(source), std::move(callbacks));
  impl_->listener = std::make_shared<Listener>(impl_->context);
}

Transport::~Transport() { stop(); }

Result<Endpoint, TransportError> Transport::start() {
  if (impl_->phase != Impl::Phase::created) {
    return make_error(TransportError::not_idle, "transport: start() after start() or stop()");
  }
  if (impl_->settings_error) return *impl_->settings_error;
  auto bound = impl_->listener->open();
  if (!bound) return bound;
  impl_->listener->start();
  impl_->phase = Impl::Phase::started;
  return bound;
}

void Transport::send(const ServerId& peer, const Endpoint& to, Bytes frame) {
  auto& counters = impl_->context->counters;
  const auto& settings = impl_->context->settings;
  if (impl_->phase != Impl::Phase::started) return count(counters.frames_dropped_stopped);
  if (frame.empty() || frame.size() > settings.frame_bytes_max) {
    return count(counters.frames_dropped_oversize);
  }
  auto link = impl_->link_to(peer, to);
  if (link == nullptr) return count(counters.frames_dropped_links_full);
  link->send(to, std::move(frame));
}

void Transport::adopt(InboundId inbound, const ServerId& peer, const Endpoint& to) {
  if (impl_->phase != Impl::Phase::started || inbound == 0) return;
  if (auto link = impl_->link_to(peer, to)) impl_->listener->adopt(inbound, std::move(link));
}

void Transport::retry_now() {
  if (impl_->phase != Impl::Phase::started) return;
  const auto now = std::chrono::steady_clock::now();
  if (impl_->last_retry && now - *impl_->last_retry < std::chrono::milliseconds(kRetryNowIntervalMs)) return;
  impl_->last_retry = now;
  count(impl_->context->counters.retries_now);
  for (auto& [peer, link] : impl_->links) link->retry_now();
}

void Transport::retain_peers(const std::vector<ServerId>& peers) {
  const std::set<ServerId> keep(peers.begin(), peers.end());
  for (auto it = impl_->links.begin(); it != impl_->links.end();) {
    if (keep.count(it->first) != 0) {
      ++it;
      continue;
    }
    it->second->close(CloseReason::retired);
    count(impl_->context->counters.links_retired);
    it = impl_->links.erase(it);
  }
}

void Transport::stop() {
  if (impl_->phase == Impl::Phase::stopped) return;
  impl_->phase = Impl::Phase::stopped;
  impl_->context->mark_stopped();
  impl_->listener->stop();
  for (auto& [peer, link] : impl_->links) link->close(CloseReason::stopped);
  impl_->links.clear();
}

TransportStats Transport::stats() const {
  TransportStats out;
  out.counters = impl_->context->counters.snapshot();
  for (const auto& [peer, link] : impl_->links) out.peers.push_back(link->stats());
  out.inbound_connections = impl_->listener->connections();
  out.inbound_unauthenticated = impl_->listener->unauthenticated();
  return out;
}

std::optional<Transport::SheddingLine> Transport::shedding_change(UnixMs now) {
  const TransportCounters c = impl_->context->counters.snapshot();
  const auto change = impl_->shed_watch.update(c.inbound_evicted + c.inbound_refused, now);
  if (!change) return std::nullopt;
  if (!change->started) {
    return SheddingLine{false, "gossip: no inbound connection shed for " + std::to_string(kShedQuietMs / 1000) +
                                   " s (" + std::to_string(change->shed) + " shed since start)"};
  }
  return SheddingLine{true, "gossip: shedding inbound connections that carry no member's frame, so members keep their places (" +
         std::to_string(c.inbound_evicted) + " evicted, " + std::to_string(c.inbound_source_full) +
         " of them by a newcomer of their own source; " + std::to_string(c.inbound_refused) +
         " refused with every place a member's; " + std::to_string(impl_->listener->unauthenticated()) + " of " +
         std::to_string(impl_->listener->connections()) + " accepted connections unauthenticated now)"};
}

}  // namespace mesh::node

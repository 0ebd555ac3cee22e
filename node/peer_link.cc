// The outgoing side of the gossip transport towards one peer (node/peer_link.h).
#include "node/peer_link.h"

#include <algorithm>
#include <string>
#include <utility>

#include <boost/asio/post.hpp>

#include "gossip/pair_connection.h"

namespace mesh::node {
namespace {

std::chrono::milliseconds ms(DurationMs duration) { return std::chrono::milliseconds(duration); }

}  // namespace

PeerLink::PeerLink(std::shared_ptr<TransportContext> context, ServerId peer, Endpoint to,
                   std::uint64_t jitter_seed)
    : context_(std::move(context)),
      peer_(std::move(peer)),
      strand_(boost::asio::make_strand(context_->io)),
      resolver_(strand_),
      socket_(strand_),
      connect_timer_(strand_),
      backoff_timer_(strand_),
      prefer_ours_(context_->settings.self < peer_),
      to_(to),
      to_next_(to),
      rng_(jitter_seed),
      stats_endpoint_(std::move(to)) {}

DurationMs PeerLink::backoff_delay(std::uint32_t failures, DurationMs min, DurationMs max, Rng& rng) {
  DurationMs ceiling = std::max<DurationMs>(min, 1);
  for (std::uint32_t i = 0; i < failures && ceiling < max; ++i) ceiling *= 2;
  ceiling = std::max(min, std::min(ceiling, max));
  return min + static_cast<DurationMs>(rng.below(static_cast<std::uint64_t>(ceiling - min) + 1));
}

void PeerLink::send(const Endpoint& to, Bytes frame) {
  const std::size_t frame_bytes = frame.size();
  if (queued_bytes_.load(std::memory_order_relaxed) + frame_bytes > context_->settings.queue_bytes_max) {
    count(context_->counters.frames_dropped_queue_full);
    // A peer down for long holds a full queue of old frames: make room.
    boost::asio::post(strand_, [self = shared_from_this()] { self->drop_stale(); });
    return;
  }
  queued_bytes_.fetch_add(frame_bytes, std::memory_order_relaxed);
  stats_endpoint_ = to;
  boost::asio::post(strand_, [self = shared_from_this(), to,
                              frame = std::make_shared<const Bytes>(std::move(frame))]() mutable {
    self->on_send(std::move(to), std::move(frame));
  });
}

void PeerLink::close(CloseReason reason) {
  boost::asio::post(strand_, [self = shared_from_this(), reason] { self->on_close(reason); });
}

void PeerLink::adopt(std::shared_ptr<FrameConnection> inbound) {
  boost::asio::post(strand_, [self = shared_from_this(), inbound = std::move(inbound)]() mutable {
    self->on_adopt(std::move(inbound));
  });
}

void PeerLink::retry_now() {
  boost::asio::post(strand_, [self = shared_from_this()] { self->on_retry_now(); });
}

PeerLinkStats PeerLink::stats() const {
  PeerLinkStats out;
  out.peer = peer_;
  out.endpoint = stats_endpoint_;
  out.connected = connected_.load(std::memory_order_relaxed) || adopted_.load(std::memory_order_relaxed);
  out.last_frame_ms = last_frame_ms_.load(std::memory_order_relaxed);
  out.queued_bytes = queued_bytes_.load(std::memory_order_relaxed);
  out.connect_failures_in_row = failures_.load(std::memory_order_relaxed);
  return out;
}

void PeerLink::on_send(Endpoint to, std::shared_ptr<const Bytes> frame) {
  if (state_ == State::closed) {
    queued_bytes_.fetch_sub(frame->size(), std::memory_order_relaxed);
    count(context_->counters.frames_dropped_link_closed);
    return;
  }
  to_next_ = std::move(to);
  drop_stale();
  queue_.push_back(Queued{std::move(frame), std::chrono::steady_clock::now()});
  pump();
}

// One frame in flight at a time, on the pair's connection
// (gossip/pair_connection.h); with neither open, ours is opened (unless a
// backoff is being waited out or a connect is under way).
void PeerLink::pump() {
  if (writing_ == Writing::none) drop_stale();
  if (queue_.empty() || writing_ != Writing::none || state_ == State::closed) return;
  switch (gossip::pair_connection(state_ == State::connected, inbound_ != nullptr, prefer_ours_)) {
    case gossip::PairConnection::ours:
      writing_ = Writing::outbound;
      return connection_->write(queue_.front().frame);
    case gossip::PairConnection::theirs:
      writing_ = Writing::inbound;
      return inbound_->post_write(queue_.front().frame);
    case gossip::PairConnection::open_ours:
      if (state_ == State::idle) do_resolve();
      return;
  }
}

// --- connecting ------------------------------------------------------------

void PeerLink::do_resolve() {
  state_ = State::connecting;
  const std::uint64_t attempt = ++attempt_;
  attempt_path_failed_ = false;
  to_ = to_next_;
  count(context_->counters.connect_attempts);
  connect_timer_.expires_after(ms(context_->settings.connect_timeout_ms));
  connect_timer_.async_wait([self = shared_from_this(), attempt](const ErrorCode& error) {
    self->on_connect_deadline(error, attempt);
  });
  // An IP literal resolves without a DNS query; a name is looked up off the strand.
  resolver_.async_resolve(to_.host, std::to_string(to_.port), Tcp::resolver::numeric_service,
                          [self = shared_from_this(), attempt](
                              const ErrorCode& error, const Tcp::resolver::results_type& results) {
                            self->on_resolve(error, results, attempt);
                          });
}

void PeerLink::on_resolve(const ErrorCode& error, const Tcp::resolver::results_type& results,
                          std::uint64_t attempt) {
  if (attempt != attempt_ || state_ != State::connecting) return;
  if (error) return on_attempt_failed();  // a name that does not resolve: not the path
  candidates_.clear();
  for (const auto& entry : results) candidates_.push_back(entry.endpoint());
  candidate_index_ = 0;
  do_connect_next();
}

// Tries the resolved addresses in order, skipping those of another address
// family than source_address.
void PeerLink::do_connect_next() {
  const auto& source = context_->source_address;
  while (candidate_index_ < candidates_.size()) {
    const Tcp::endpoint target = candidates_[candidate_index_++];
    if (source && source->is_v4() != target.address().is_v4()) continue;
    ErrorCode error;
    socket_.close(error);
    socket_.open(target.protocol(), error);
    if (!error && source) socket_.bind(Tcp::endpoint(*source, 0), error);
    if (error) continue;
    // Data unacknowledged this long breaks the connection (ETIMEDOUT), so a
    // path cut while the connection was open is found, and reported, within
    // it rather than after the kernel's 15 retransmissions (~15 minutes).
    ErrorCode ignored;
    socket_.set_option(UserTimeout(static_cast<int>(context_->settings.user_timeout_ms)), ignored);
    socket_.async_connect(target, [self = shared_from_this(), attempt = attempt_](const ErrorCode& e) {
      self->on_connect(e, attempt);
    });
    return;
  }
  on_attempt_failed();
}

void PeerLink::on_connect(const ErrorCode& error, std::uint64_t attempt) {
  if (attempt != attempt_ || state_ != State::connecting) return;
  if (error) {
    if (is_path_failure(error)) attempt_path_failed_ = true;
    return do_connect_next();
  }
  on_connected();
}

void PeerLink::on_connect_deadline(const ErrorCode& error, std::uint64_t attempt) {
  if (error == boost::asio::error::operation_aborted) return;
  if (attempt != attempt_ || state_ != State::connecting) return;
  count(context_->counters.connect_timeouts);
  attempt_path_failed_ = true;
  on_attempt_failed();
}

void PeerLink::on_attempt_failed() {
  ++attempt_;  // outstanding handlers of the failed attempt now do nothing
  ErrorCode ignored;
  resolver_.cancel();
  socket_.close(ignored);
  connect_timer_.cancel();
  count(context_->counters.connect_failures);
  failures_.fetch_add(1, std::memory_order_relaxed);
  if (attempt_path_failed_) context_->report_path_failed(peer_);
  do_backoff();
}

void PeerLink::do_backoff() {
  state_ = State::backing_off;
  const auto& settings = context_->settings;
  const DurationMs delay = backoff_delay(failures_.load(std::memory_order_relaxed),
                                         settings.backoff_min_ms, settings.backoff_max_ms, rng_);
  backoff_timer_.expires_after(ms(delay));
  backoff_timer_.async_wait([self = shared_from_this()](const ErrorCode& error) {
    self->on_backoff_done(error);
  });
}

void PeerLink::on_backoff_done(const ErrorCode& error) {
  if (error == boost::asio::error::operation_aborted || state_ != State::backing_off) return;
  state_ = State::idle;
  pump();
}

void PeerLink::on_retry_now() {
  if (state_ != State::backing_off) return;
  backoff_timer_.cancel();  // its handler finds the state changed
  state_ = State::idle;
  pump();
}

void PeerLink::on_connected() {
  connect_timer_.cancel();
  count(context_->counters.connections_opened);
  const std::weak_ptr<PeerLink> weak = weak_from_this();
  FrameConnection::Handlers handlers{
      .on_written = [weak] { if (auto self = weak.lock()) self->on_written(); },
      .on_read = [weak] { if (auto self = weak.lock()) self->last_frame_ms_ = wall_clock_ms(); },
      .on_closed = [weak](CloseReason reason) {
        if (auto self = weak.lock()) self->on_connection_closed(reason);
      }};
  // A moved-from socket is as new, on the same strand: ready for the next attempt.
  connection_ = std::make_shared<FrameConnection>(std::move(socket_), context_, std::move(handlers));
  state_ = State::connected;
  connected_ = true;
  connection_->start(/*inbound=*/false);
  context_->report_path_up(peer_);
  pump();
}

// --- connected -------------------------------------------------------------

void PeerLink::on_written() {
  writing_ = Writing::none;
  frame_written();
}

void PeerLink::frame_written() {
  queued_bytes_.fetch_sub(queue_.front().frame->size(), std::memory_order_relaxed);
  queue_.pop_front();
  failures_ = 0;
  pump();
}

// --- the peer's adopted connection -----------------------------------------

// Its handlers run on its own strand and come back here; they name the
// connection, so those of one replaced meanwhile do nothing.
void PeerLink::on_adopt(std::shared_ptr<FrameConnection> inbound) {
  if (state_ == State::closed || inbound == inbound_) return;
  const std::weak_ptr<PeerLink> weak = weak_from_this();
  const FrameConnection* id = inbound.get();
  auto on_strand = [weak, strand = strand_](auto task) {
    boost::asio::post(strand, [weak, task = std::move(task)] {
      if (auto self = weak.lock()) task(*self);
    });
  };
  FrameConnection::Handlers handlers{
      .on_written = [on_strand, id] { on_strand([id](PeerLink& self) { self.on_inbound_written(id); }); },
      .on_read = [weak] { if (auto self = weak.lock()) self->last_frame_ms_ = wall_clock_ms(); },
      .on_closed = [on_strand, id](CloseReason reason) {
        on_strand([id, reason](PeerLink& self) { self.on_inbound_closed(id, reason); });
      }};
  if (writing_ == Writing::inbound) writing_ = Writing::none;  // the older one's write: sent again
  inbound_ = std::move(inbound);
  adopted_ = true;
  count(context_->counters.inbound_adopted);
  inbound_->post_adopt(std::move(handlers));
  context_->report_path_up(peer_);
  pump();
}

void PeerLink::on_inbound_written(const FrameConnection* inbound) {
  if (inbound != inbound_.get() || writing_ != Writing::inbound) return;
  writing_ = Writing::none;
  frame_written();
}

// A frame being written on it stays queued for the next connection.
void PeerLink::on_inbound_closed(const FrameConnection* inbound, CloseReason reason) {
  if (inbound != inbound_.get()) return;
  if (reason == CloseReason::timed_out || reason == CloseReason::write_timeout) {
    context_->report_path_failed(peer_);
  }
  inbound_.reset();
  adopted_ = false;
  if (writing_ == Writing::inbound) writing_ = Writing::none;
  pump();
}

// Frames still queued when a connection breaks: reconnect at once if the
// connection had delivered a frame since the last failure, else back off
// (a peer that accepts and drops us is treated like one that refuses).
void PeerLink::on_connection_closed(CloseReason reason) {
  if (reason == CloseReason::timed_out || reason == CloseReason::write_timeout) {
    context_->report_path_failed(peer_);
  }
  connection_.reset();
  connected_ = false;
  if (writing_ == Writing::outbound) writing_ = Writing::none;
  if (state_ == State::closed) return;
  state_ = State::idle;
  if (queue_.empty()) return;
  if (inbound_ != nullptr) return pump();  // the peer's connection carries on
  if (failures_.fetch_add(1, std::memory_order_relaxed) == 0) return pump();
  do_backoff();
}

void PeerLink::on_close(CloseReason reason) {
  if (state_ == State::closed) return;
  state_ = State::closed;
  ++attempt_;
  ErrorCode ignored;
  resolver_.cancel();
  socket_.close(ignored);
  connect_timer_.cancel();
  backoff_timer_.cancel();
  if (connection_) connection_->close(reason);
  // The peer's connection is closed too: it is no member's any more.
  if (inbound_) inbound_->post_close(reason);
  inbound_.reset();
  adopted_ = false;
  drop_queue();
}

void PeerLink::drop_queue() {
  std::size_t dropped_bytes = 0;
  for (const Queued& queued : queue_) dropped_bytes += queued.frame->size();
  count(context_->counters.frames_dropped_link_closed, queue_.size());
  queue_.clear();
  queued_bytes_.fetch_sub(dropped_bytes, std::memory_order_relaxed);
}

void PeerLink::drop_stale() {
  // A peer restarted after minutes away got the frames of the moment it
  // died before the fleet's current ones: its clock watch took the fleet
  // for 11 minutes behind it (the alert soak G, 2026-12-05).
  const auto oldest = std::chrono::steady_clock::now() - ms(context_->settings.queue_age_max_ms);
  const std::size_t first = writing_ == Writing::none ? 0 : 1;  // the front may be on its way
  std::size_t dropped_bytes = 0;
  std::size_t dropped = 0;
  while (queue_.size() > first && queue_[first].at < oldest) {
    dropped_bytes += queue_[first].frame->size();
    ++dropped;
    queue_.erase(queue_.begin() + static_cast<std::ptrdiff_t>(first));
  }
  if (dropped == 0) return;
  count(context_->counters.frames_dropped_stale, dropped);
  queued_bytes_.fetch_sub(dropped_bytes, std::memory_order_relaxed);
}

}  // namespace mesh::node

// The accepting side of the gossip transport (node/listener.h).
#include "node/listener.h"

#include <algorithm>
#include <chrono>
#include <string>
#include <utility>

#include <boost/asio/post.hpp>
#include <boost/asio/strand.hpp>

#include "record/roster.h"

namespace mesh::node {

Listener::Listener(std::shared_ptr<TransportContext> context)
    : context_(std::move(context)),
      strand_(boost::asio::make_strand(context_->io)),
      acceptor_(strand_),
      retry_timer_(strand_),
      admission_(InboundLimits{context_->settings.inbound_connections_max,
                               std::max<std::size_t>(1, context_->settings.inbound_unauthenticated_per_source_max)}) {}

Result<Endpoint, TransportError> Listener::open() {
  const Endpoint& listen = context_->settings.listen;
  const std::string where = format_endpoint(listen);
  ErrorCode error;
  ErrorCode ignored;
  const auto address = boost::asio::ip::make_address(listen.host, error);
  if (error) {
    return make_error(TransportError::bad_address,
                      "transport: listen address " + where + " is not an IP literal");
  }
  const boost::asio::ip::tcp::endpoint endpoint(address, listen.port);
  acceptor_.open(endpoint.protocol(), error);
  if (!error) acceptor_.set_option(boost::asio::socket_base::reuse_address(true), error);
  if (!error) acceptor_.bind(endpoint, error);
  if (error) {
    acceptor_.close(ignored);
    return make_error(TransportError::bind_failed,
                      "transport: cannot bind " + where + ": " + error.message());
  }
  acceptor_.listen(boost::asio::socket_base::max_listen_connections, error);
  if (error) {
    acceptor_.close(ignored);
    return make_error(TransportError::listen_failed,
                      "transport: cannot listen on " + where + ": " + error.message());
  }
  const auto bound = acceptor_.local_endpoint(error);
  return Endpoint{bound.address().to_string(), bound.port()};
}

void Listener::start() {
  boost::asio::post(strand_, [self = shared_from_this()] { self->do_accept(); });
}

void Listener::stop() {
  boost::asio::post(strand_, [self = shared_from_this()] { self->on_stop(); });
}

void Listener::on_stop() {
  if (stopped_) return;
  stopped_ = true;
  ErrorCode ignored;
  acceptor_.close(ignored);
  retry_timer_.cancel();
  for (auto& [id, session] : sessions_) {
    session->post_close(CloseReason::stopped);
    admission_.closed(id);
  }
  sessions_.clear();
  update_counts();
}

void Listener::do_accept() {
  if (stopped_) return;
  // Each accepted socket runs on a strand of its own.
  acceptor_.async_accept(boost::asio::make_strand(context_->io),
                         [self = shared_from_this()](const ErrorCode& error,
                                                     boost::asio::ip::tcp::socket socket) {
                           self->on_accept(error, std::move(socket));
                         });
}

void Listener::on_accept(const ErrorCode& error, boost::asio::ip::tcp::socket socket) {
  if (stopped_ || error == boost::asio::error::operation_aborted) return;
  if (error) {
    count(context_->counters.accept_errors);
    retry_timer_.expires_after(std::chrono::milliseconds(kAcceptRetryMs));
    retry_timer_.async_wait([self = shared_from_this()](const ErrorCode& e) { self->on_accept_retry(e); });
    return;
  }
  admit(std::move(socket));
  do_accept();
}

void Listener::on_accept_retry(const ErrorCode& error) {
  if (stopped_ || error == boost::asio::error::operation_aborted) return;
  do_accept();
}

namespace {

InboundSource source_of(const boost::asio::ip::tcp::socket& socket) {
  boost::system::error_code error;
  const auto remote = socket.remote_endpoint(error);
  if (error) return InboundSource{};  // gone already: its reads fail at once
  const auto address = remote.address();
  if (address.is_v4()) return inbound_source_v4(address.to_v4().to_uint());
  return inbound_source_v6(address.to_v6().to_bytes());
}

}  // namespace

// Every newcomer is served unless every place is a member's: when a source
// or the table is full, an unauthenticated connection gives way
// (node/inbound_admission.h), so an outsider's connections cannot keep a
// member out.
void Listener::admit(boost::asio::ip::tcp::socket socket) {
  const std::uint64_t id = ++next_session_id_;
  const InboundDecision decision = admission_.admit(id, source_of(socket));
  if (!decision.admitted()) {
    count(context_->counters.inbound_refused);
    ErrorCode ignored;
    socket.close(ignored);
    return;
  }
  if (decision.outcome == InboundDecision::Outcome::admitted_source_full) {
    count(context_->counters.inbound_source_full);
  }
  if (decision.evict) {
    auto it = sessions_.find(*decision.evict);
    if (it != sessions_.end()) {
      it->second->post_close(CloseReason::evicted);
      sessions_.erase(it);
    }
  }
  count(context_->counters.connections_accepted);
  // The handlers run on the session's strand; the registry lives on ours.
  FrameConnection::Handlers handlers{
      .on_read = [weak = weak_from_this(), strand = strand_, id, first = true]() mutable {
        if (!std::exchange(first, false)) return;
        boost::asio::post(strand, [weak, id] {
          if (auto self = weak.lock()) self->on_session_heard(id);
        });
      },
      .on_closed = [weak = weak_from_this(), strand = strand_, id](CloseReason) {
        boost::asio::post(strand, [weak, id] {
          if (auto self = weak.lock()) self->on_session_closed(id);
        });
      }};
  auto session = std::make_shared<FrameConnection>(std::move(socket), context_, std::move(handlers), id);
  sessions_.emplace(id, session);
  update_counts();
  session->post_start(/*inbound=*/true);
}

void Listener::adopt(InboundId id, std::shared_ptr<PeerLink> link) {
  boost::asio::post(strand_, [self = shared_from_this(), id, link = std::move(link)] {
    auto it = self->sessions_.find(id);
    if (it == self->sessions_.end()) return;
    self->admission_.authenticated(id);
    self->update_counts();
    link->adopt(it->second);
  });
}

void Listener::on_session_heard(std::uint64_t id) { admission_.heard(id); }

void Listener::on_session_closed(std::uint64_t id) {
  sessions_.erase(id);
  admission_.closed(id);
  update_counts();
}

void Listener::update_counts() {
  session_count_ = sessions_.size();
  unauthenticated_count_ = admission_.unauthenticated_count();
}

}  // namespace mesh::node

// The accepting side of the gossip transport (node/listener.h).
#include "node/listener.h"

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
      retry_timer_(strand_) {}

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
  for (auto& [id, session] : sessions_) session->post_close(CloseReason::stopped);
  sessions_.clear();
  session_count_ = 0;
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

// At the bound the newcomer is refused: the transport cannot tell a member
// from an attacker (frames are checked by the core), and evicting an open
// connection would let a flood of new ones push out members.
void Listener::admit(boost::asio::ip::tcp::socket socket) {
  if (sessions_.size() >= context_->settings.inbound_connections_max) {
    count(context_->counters.inbound_refused);
    ErrorCode ignored;
    socket.close(ignored);
    return;
  }
  count(context_->counters.connections_accepted);
  const std::uint64_t id = ++next_session_id_;
  // on_closed runs on the session's strand; the registry lives on ours.
  FrameConnection::Handlers handlers{
      .on_closed = [weak = weak_from_this(), strand = strand_, id](CloseReason) {
        boost::asio::post(strand, [weak, id] {
          if (auto self = weak.lock()) self->on_session_closed(id);
        });
      }};
  auto session = std::make_shared<FrameConnection>(std::move(socket), context_, std::move(handlers), id);
  sessions_.emplace(id, session);
  session_count_ = sessions_.size();
  session->post_start(/*inbound=*/true);
}

void Listener::adopt(InboundId id, std::shared_ptr<PeerLink> link) {
  boost::asio::post(strand_, [self = shared_from_this(), id, link = std::move(link)] {
    auto it = self->sessions_.find(id);
    if (it != self->sessions_.end()) link->adopt(it->second);
  });
}

void Listener::on_session_closed(std::uint64_t id) {
  sessions_.erase(id);
  session_count_ = sessions_.size();
}

}  // namespace mesh::node

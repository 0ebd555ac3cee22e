#include "tools/standin/session.h"

namespace mesh::standin {

namespace asio = boost::asio;
using boost::system::error_code;

Session::Session(asio::ip::tcp::socket socket, asio::ssl::context& tls, BlockAction action,
                 std::chrono::milliseconds deadline, ListenerCounters& counters)
    : stream_(std::move(socket), tls),
      deadline_(stream_.get_executor()),
      action_(action),
      deadline_after_(deadline),
      counters_(counters) {
  ++counters_.active;
}

Session::~Session() { --counters_.active; }

void Session::start() {
  deadline_.expires_after(deadline_after_);
  deadline_.async_wait([self = shared_from_this()](const error_code& e) { self->on_deadline(e); });
  switch (action_) {
    case BlockAction::none: return do_handshake();
    case BlockAction::reset: return do_read_hello();
    case BlockAction::drop: return;  // nothing until the deadline
  }
}

void Session::do_handshake() {
  stream_.async_handshake(
      asio::ssl::stream_base::server,
      [self = shared_from_this()](const error_code& e) { self->on_handshake(e); });
}

void Session::on_handshake(const error_code& error) {
  if (closed_) return;
  if (error) {
    ++counters_.failed;
    return close(false);
  }
  ++counters_.handshakes;
  handshake_done_ = true;
  // close_notify, then wait (up to the deadline) for the client's.
  stream_.async_shutdown([self = shared_from_this()](const error_code&) { self->on_shutdown(); });
}

void Session::on_shutdown() { close(false); }

void Session::do_read_hello() {
  // The raw TCP socket: no TLS engine between us and the ClientHello.
  stream_.next_layer().async_read_some(
      asio::buffer(hello_),
      [self = shared_from_this()](const error_code& e, std::size_t) { self->on_hello(e); });
}

void Session::on_hello(const error_code& error) {
  if (closed_) return;
  if (!error) ++counters_.reset;
  close(!error);
}

void Session::on_deadline(const error_code& error) {
  if (error == asio::error::operation_aborted || closed_) return;
  if (action_ == BlockAction::drop) {
    ++counters_.dropped;
  } else if (!handshake_done_) {
    ++counters_.failed;
  }
  close(false);
}

void Session::close(bool reset) {
  if (closed_) return;
  closed_ = true;
  error_code ignored;
  asio::ip::tcp::socket& socket = stream_.next_layer();
  // Linger on, timeout 0: close() sends a RST instead of a FIN.
  if (reset) socket.set_option(asio::socket_base::linger(true, 0), ignored);
  socket.close(ignored);
  deadline_.cancel();
}

}  // namespace mesh::standin

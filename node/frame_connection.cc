// One TCP connection carrying length-prefixed frames (node/frame_connection.h).
#include "node/frame_connection.h"

#include <algorithm>
#include <array>
#include <utility>

#include <boost/asio/post.hpp>
#include <boost/asio/read.hpp>
#include <boost/asio/write.hpp>

#include <netinet/in.h>
#include <netinet/tcp.h>

#include "common/check.h"

namespace mesh::node {
namespace {

std::chrono::milliseconds ms(DurationMs duration) { return std::chrono::milliseconds(duration); }

void count_close(AtomicTransportCounters& counters, CloseReason reason) {
  switch (reason) {
    case CloseReason::peer_closed: return count(counters.connections_closed_by_peer);
    case CloseReason::io_error: return count(counters.connections_closed_error);
    case CloseReason::timed_out:
      count(counters.connections_closed_error);
      return count(counters.connections_timed_out);
    case CloseReason::oversize: return count(counters.frames_oversize);
    case CloseReason::read_timeout: return count(counters.frames_read_timeout);
    case CloseReason::unauthenticated: return count(counters.inbound_unauthenticated_closed);
    case CloseReason::evicted: return count(counters.inbound_evicted);
    case CloseReason::write_timeout: return count(counters.frames_write_timeout);
    case CloseReason::idle: return count(counters.connections_idle_closed);
    case CloseReason::retired:
    case CloseReason::stopped: return;
  }
}

}  // namespace

FrameConnection::FrameConnection(boost::asio::ip::tcp::socket socket,
                                 std::shared_ptr<TransportContext> context, Handlers handlers,
                                 InboundId inbound)
    : socket_(std::move(socket)),
      read_timer_(socket_.get_executor()),
      write_timer_(socket_.get_executor()),
      idle_timer_(socket_.get_executor()),
      auth_timer_(socket_.get_executor()),
      context_(std::move(context)),
      handlers_(std::move(handlers)),
      inbound_(inbound),
      last_frame_time_(Clock::now()) {}

void FrameConnection::start(bool inbound) {
  ErrorCode ignored;
  socket_.set_option(boost::asio::ip::tcp::no_delay(true), ignored);
  if (inbound) {
    auth_timer_.expires_after(ms(context_->settings.auth_timeout_ms));
    auth_timer_.async_wait([self = shared_from_this()](const ErrorCode& error) { self->on_auth_deadline(error); });
  }
  do_idle_wait();
  do_read_prefix();
}

void FrameConnection::post_start(bool inbound) {
  boost::asio::post(socket_.get_executor(), [self = shared_from_this(), inbound] { self->start(inbound); });
}

void FrameConnection::post_adopt(Handlers writer) {
  boost::asio::post(socket_.get_executor(), [self = shared_from_this(), writer = std::move(writer)]() mutable {
    if (!self->open_) {
      if (writer.on_closed) writer.on_closed(CloseReason::peer_closed);
      return;
    }
    self->writer_ = std::move(writer);
    self->inbound_ = 0;
    self->auth_timer_.cancel();
    // As on a connection this node opens: data we write that goes
    // unacknowledged breaks the connection, and the path counts as failed.
    using UserTimeout = boost::asio::detail::socket_option::integer<IPPROTO_TCP, TCP_USER_TIMEOUT>;
    ErrorCode ignored;
    self->socket_.set_option(UserTimeout(static_cast<int>(self->context_->settings.user_timeout_ms)), ignored);
  });
}

void FrameConnection::post_write(std::shared_ptr<const Bytes> frame) {
  boost::asio::post(socket_.get_executor(), [self = shared_from_this(), frame = std::move(frame)]() mutable {
    if (self->open_) self->write(std::move(frame));
  });
}

void FrameConnection::close(CloseReason reason) {
  if (!open_) return;
  auto self = shared_from_this();  // the owner may drop its pointer in on_closed
  open_ = false;
  ErrorCode ignored;
  socket_.shutdown(boost::asio::ip::tcp::socket::shutdown_both, ignored);
  socket_.close(ignored);
  read_timer_.cancel();
  write_timer_.cancel();
  idle_timer_.cancel();
  auth_timer_.cancel();
  count_close(context_->counters, reason);
  auto on_closed = std::move(handlers_.on_closed);
  auto writer_closed = std::move(writer_.on_closed);
  handlers_ = Handlers{};  // break any reference cycle through the owners
  writer_ = Handlers{};
  if (on_closed) on_closed(reason);
  if (writer_closed) writer_closed(reason);
}

void FrameConnection::post_close(CloseReason reason) {
  boost::asio::post(socket_.get_executor(),
                    [self = shared_from_this(), reason] { self->close(reason); });
}

bool is_path_failure(const boost::system::error_code& error) {
  return error == boost::asio::error::timed_out || error == boost::asio::error::host_unreachable ||
         error == boost::asio::error::network_unreachable;
}

void FrameConnection::on_io_error(const ErrorCode& error) {
  if (!open_ || error == boost::asio::error::operation_aborted) return;
  if (error == boost::asio::error::eof) return close(CloseReason::peer_closed);
  close(is_path_failure(error) ? CloseReason::timed_out : CloseReason::io_error);
}

// --- reading ---------------------------------------------------------------

void FrameConnection::do_read_prefix() {
  if (!open_) return;
  boost::asio::async_read(socket_, boost::asio::buffer(read_prefix_),
                          [self = shared_from_this()](const ErrorCode& error, std::size_t) {
                            self->on_read_prefix(error);
                          });
}

void FrameConnection::on_read_prefix(const ErrorCode& error) {
  if (error) return on_io_error(error);
  const std::uint32_t announced = decode_frame_prefix(read_prefix_);
  // Checked before anything is allocated: the length is the peer's word.
  if (check_frame_length(announced, context_->settings.frame_bytes_max) != FrameLength::ok) {
    return close(CloseReason::oversize);
  }
  body_bytes_ = announced;
  body_.clear();
  reading_body_ = true;
  arm_read_deadline(CloseReason::read_timeout);
  do_read_body();
}

void FrameConnection::do_read_body() {
  const std::size_t have = body_.size();
  const std::size_t step = std::min(kReadChunkBytes, body_bytes_ - have);
  body_.resize(have + step);
  boost::asio::async_read(socket_, boost::asio::buffer(body_.data() + have, step),
                          [self = shared_from_this()](const ErrorCode& error, std::size_t) {
                            self->on_read_body(error);
                          });
}

void FrameConnection::on_read_body(const ErrorCode& error) {
  if (error) return on_io_error(error);
  if (body_.size() < body_bytes_) return do_read_body();
  on_frame_complete();
}

void FrameConnection::on_frame_complete() {
  reading_body_ = false;
  ++frames_read_;
  read_timer_.cancel();
  last_frame_time_ = Clock::now();
  count(context_->counters.frames_received);
  count(context_->counters.bytes_received, body_.size());
  if (handlers_.on_read) handlers_.on_read();
  if (writer_.on_read) writer_.on_read();
  Bytes frame = std::move(body_);
  body_ = Bytes{};
  // The next prefix is read once the daemon has taken this frame (backpressure).
  context_->deliver(std::move(frame), inbound_, [self = shared_from_this()] {
    boost::asio::post(self->socket_.get_executor(), [self] { self->do_read_prefix(); });
  });
}

void FrameConnection::arm_read_deadline(CloseReason reason) {
  read_timer_.expires_after(ms(context_->settings.read_timeout_ms));
  read_timer_.async_wait([self = shared_from_this(), index = frames_read_, reason](const ErrorCode& error) {
    self->on_read_deadline(error, index, reason);
  });
}

void FrameConnection::on_read_deadline(const ErrorCode& error, std::uint64_t frame_index,
                                       CloseReason reason) {
  if (error == boost::asio::error::operation_aborted) return;
  if (!open_ || frame_index != frames_read_) return;  // that frame completed meanwhile
  close(reason);
}

// --- writing ---------------------------------------------------------------

void FrameConnection::write(std::shared_ptr<const Bytes> frame) {
  MESH_CHECK(open_ && !writing_, "FrameConnection::write: closed or a write in flight");
  writing_ = true;
  write_frame_ = std::move(frame);
  write_prefix_ = encode_frame_prefix(write_frame_->size());
  write_timer_.expires_after(ms(context_->settings.write_timeout_ms));
  write_timer_.async_wait([self = shared_from_this(), index = writes_done_](const ErrorCode& error) {
    self->on_write_deadline(error, index);
  });
  const std::array<boost::asio::const_buffer, 2> buffers{boost::asio::buffer(write_prefix_),
                                                         boost::asio::buffer(*write_frame_)};
  boost::asio::async_write(socket_, buffers,
                           [self = shared_from_this()](const ErrorCode& error, std::size_t) {
                             self->on_write(error);
                           });
}

void FrameConnection::on_write(const ErrorCode& error) {
  writing_ = false;
  ++writes_done_;
  write_timer_.cancel();
  const std::size_t frame_bytes = write_frame_->size();
  write_frame_.reset();
  if (error) return on_io_error(error);
  last_frame_time_ = Clock::now();
  count(context_->counters.frames_sent);
  count(context_->counters.bytes_sent, frame_bytes);
  if (handlers_.on_written) handlers_.on_written();
  if (writer_.on_written) {
    count(context_->counters.frames_sent_inbound);
    writer_.on_written();
  }
}

void FrameConnection::on_write_deadline(const ErrorCode& error, std::uint64_t write_index) {
  if (error == boost::asio::error::operation_aborted) return;
  if (!open_ || !writing_ || write_index != writes_done_) return;
  close(CloseReason::write_timeout);
}

// --- authentication --------------------------------------------------------

void FrameConnection::on_auth_deadline(const ErrorCode& error) {
  if (error == boost::asio::error::operation_aborted || !open_) return;
  if (inbound_ != 0) close(CloseReason::unauthenticated);  // still not adopted
}

// --- idle ------------------------------------------------------------------

void FrameConnection::do_idle_wait() {
  idle_timer_.expires_at(last_frame_time_ + ms(context_->settings.idle_timeout_ms));
  idle_timer_.async_wait([self = shared_from_this()](const ErrorCode& error) {
    self->on_idle_deadline(error);
  });
}

void FrameConnection::on_idle_deadline(const ErrorCode& error) {
  if (error == boost::asio::error::operation_aborted || !open_) return;
  const auto idle = ms(context_->settings.idle_timeout_ms);
  // A frame in flight has its own deadline; when it completes it is traffic.
  if (reading_body_ || writing_) {
    idle_timer_.expires_after(idle);
  } else if (Clock::now() >= last_frame_time_ + idle) {
    return close(CloseReason::idle);
  } else {
    idle_timer_.expires_at(last_frame_time_ + idle);
  }
  idle_timer_.async_wait([self = shared_from_this()](const ErrorCode& error) {
    self->on_idle_deadline(error);
  });
}

}  // namespace mesh::node

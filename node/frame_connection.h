// One TCP connection carrying length-prefixed frames (docs/PROTOCOL.md,
// "2a. Transport"), outgoing (owned by a PeerLink) or accepted (owned by the
// Listener). Internal to node/transport*.
//
// Threading: everything runs on the socket's executor, a strand of this
// connection (or of its PeerLink), except the constructor, post_start() and
// post_close(), which any thread may call. Handlers hold shared_from_this(), so closing or dropping
// the owner's pointer never frees state an outstanding handler touches.
//
// Reads: prefix, check the length (0 or > frame_bytes_max: close, counted),
// then the body in chunks of kReadChunkBytes, so memory follows the bytes
// that really arrived, never the announced size. The next frame is read only
// after the daemon took this one (TransportContext::deliver).
// Deadlines: a frame started must finish within read_timeout_ms; an
// accepted connection must be adopted (carry a member's frame) within
// auth_timeout_ms;
// a write must finish within write_timeout_ms; with no whole frame either
// way for idle_timeout_ms the connection closes.
// Adoption: an accepted connection whose frames a member sealed is handed
// to that member's PeerLink, which then writes on it too (adopt(), write()
// through post_write()); its handlers join the listener's.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>

#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/steady_timer.hpp>

#include "common/bytes.h"
#include "node/frame_codec.h"
#include "node/transport_context.h"

namespace mesh::node {

// Why a connection closed; each maps to one counter (or none: retired, stopped).
enum class CloseReason {
  peer_closed,    // EOF from the other side
  io_error,       // a read, write or socket error
  timed_out,      // data unacknowledged for user_timeout_ms (ETIMEDOUT), or the host unreachable
  oversize,       // a prefix announced 0 or more than frame_bytes_max
  read_timeout,   // a frame started did not finish within read_timeout_ms
  unauthenticated,  // an accepted connection carried no member's frame within auth_timeout_ms
  evicted,        // an unauthenticated accepted connection gave its place to a newcomer
  write_timeout,  // a write did not finish within write_timeout_ms
  idle,           // no whole frame either way for idle_timeout_ms
  retired,        // the owner closed it (retain_peers, endpoint gone)
  stopped,        // Transport::stop()
};

// True for the errors that say the path to the peer failed, not the peer:
// no answer (ETIMEDOUT, from a connect or from TCP_USER_TIMEOUT) or an
// unreachable host or network. A refusal or a reset is the host answering.
bool is_path_failure(const boost::system::error_code& error);

class FrameConnection : public std::enable_shared_from_this<FrameConnection> {
 public:
  // Bytes read per step of a body: a peer that announces 1 MiB and sends a
  // byte costs us one chunk, not 1 MiB.
  static constexpr std::size_t kReadChunkBytes = 64 * 1024;

  struct Handlers {
    std::function<void()> on_written;            // the frame given to write() left whole
    std::function<void()> on_read;               // a whole frame arrived (before it is delivered)
    std::function<void(CloseReason)> on_closed;  // once, after the socket closed
  };

  // `socket`: connected; its executor is the strand this connection runs on.
  // `inbound`: the listener's id of an accepted connection (0 for one this
  // node opened), given with each frame until the connection is adopted.
  FrameConnection(boost::asio::ip::tcp::socket socket, std::shared_ptr<TransportContext> context,
                  Handlers handlers, InboundId inbound = 0);

  // Starts the read loop and the idle deadline. `inbound`: an accepted
  // connection, which must be adopted within auth_timeout_ms.
  void start(bool inbound);
  // start() from any thread (posted to the strand).
  void post_start(bool inbound);

  // Writes prefix + frame as one buffer sequence; on_written follows.
  // REQUIRES: on the strand, is_open(), !writing().
  void write(std::shared_ptr<const Bytes> frame);

  // Adopts this accepted connection for a member's PeerLink (any thread;
  // runs on the strand): `writer`'s handlers are called too from now on,
  // TCP_USER_TIMEOUT is set as on connections this node opens, and frames
  // no longer carry the inbound id. When the connection has closed already,
  // writer.on_closed is called at once.
  void post_adopt(Handlers writer);
  // write() from any thread (posted to the strand); a connection closed
  // meanwhile drops the frame (its writer's on_closed has been or will be
  // called). REQUIRES: no write of this connection in flight.
  void post_write(std::shared_ptr<const Bytes> frame);

  // Closes the socket, cancels the deadlines, counts `reason`, calls
  // on_closed. On the strand; idempotent.
  void close(CloseReason reason);
  // close() from any thread (posted to the strand).
  void post_close(CloseReason reason);

  bool is_open() const { return open_; }
  bool writing() const { return writing_; }

 private:
  using Clock = std::chrono::steady_clock;
  using ErrorCode = boost::system::error_code;

  void do_read_prefix();
  void on_read_prefix(const ErrorCode& error);
  void do_read_body();
  void on_read_body(const ErrorCode& error);
  void on_frame_complete();
  void arm_read_deadline(CloseReason reason);
  void on_read_deadline(const ErrorCode& error, std::uint64_t frame_index, CloseReason reason);
  void on_write(const ErrorCode& error);
  void on_write_deadline(const ErrorCode& error, std::uint64_t write_index);
  void do_idle_wait();
  void on_idle_deadline(const ErrorCode& error);
  void on_auth_deadline(const ErrorCode& error);
  void on_io_error(const ErrorCode& error);

  boost::asio::ip::tcp::socket socket_;
  boost::asio::steady_timer read_timer_;
  boost::asio::steady_timer write_timer_;
  boost::asio::steady_timer idle_timer_;
  boost::asio::steady_timer auth_timer_;  // an accepted connection not adopted yet
  std::shared_ptr<TransportContext> context_;
  Handlers handlers_;
  Handlers writer_;                    // the adopting PeerLink's, once adopted
  InboundId inbound_ = 0;              // 0 once adopted

  bool open_ = true;
  bool reading_body_ = false;          // a prefix arrived, its body has not
  std::uint64_t frames_read_ = 0;      // identifies the frame a read deadline belongs to
  FramePrefix read_prefix_{};
  std::size_t body_bytes_ = 0;         // announced length of the frame being read
  Bytes body_;                         // bytes of it read so far

  bool writing_ = false;
  std::uint64_t writes_done_ = 0;      // identifies the write a deadline belongs to
  FramePrefix write_prefix_{};
  std::shared_ptr<const Bytes> write_frame_;  // alive until its write completes

  Clock::time_point last_frame_time_;  // last whole frame either way (or the start)
};

}  // namespace mesh::node

// What every part of the gossip transport shares (internal to node/transport*):
// the settings, the io_context its sockets run on, the counters, and the one
// way a received frame reaches the daemon. Held by shared_ptr, so a session
// whose handlers outlive the Transport still finds it (and finds it stopped).
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/address.hpp>

#include "common/bytes.h"
#include "common/time.h"
#include "node/transport.h"
#include "node/transport_settings.h"

namespace mesh::node {

struct AtomicTransportCounters {
#define MESH_TRANSPORT_ATOMIC_FIELD(name) std::atomic<std::uint64_t> name{0};
  MESH_TRANSPORT_COUNTERS(MESH_TRANSPORT_ATOMIC_FIELD)
#undef MESH_TRANSPORT_ATOMIC_FIELD

  TransportCounters snapshot() const;
};

// Adds `amount` to `counter` (relaxed: counters order nothing).
inline void count(std::atomic<std::uint64_t>& counter, std::uint64_t amount = 1) {
  counter.fetch_add(amount, std::memory_order_relaxed);
}

// Milliseconds since the Unix epoch, for stats only (deadlines use steady_clock).
UnixMs wall_clock_ms();

class TransportContext : public std::enable_shared_from_this<TransportContext> {
 public:
  // `post_to_daemon` runs tasks on the daemon's strand; the callbacks run
  // only there.
  TransportContext(boost::asio::io_context& io, DaemonPost post_to_daemon, TransportSettings settings,
                   std::optional<boost::asio::ip::address> source, TransportCallbacks callbacks);

  // Hands `frame` (and the accepted connection it came on, 0 for others) to
  // on_frame on the daemon's strand (dropped once stopped), then runs
  // `resume` there: a session reads its next frame only after the daemon
  // took this one, so a slow daemon slows the readers (TCP backpressure)
  // instead of growing a queue. Any thread.
  void deliver(Bytes frame, InboundId inbound, std::function<void()> resume);

  // Counts paths_failed and hands `peer` to on_path_failed on the daemon's
  // strand (not once stopped). Any thread.
  void report_path_failed(const ServerId& peer);
  // Counts paths_up and hands `peer` to on_path_up likewise. Any thread.
  void report_path_up(const ServerId& peer);

  // From now on no frame reaches on_frame. REQUIRES: on the daemon's strand.
  void mark_stopped() { stopped_ = true; }

  boost::asio::io_context& io;
  const DaemonPost post_to_daemon;
  const TransportSettings settings;
  const std::optional<boost::asio::ip::address> source_address;  // bind outgoing sockets here
  AtomicTransportCounters counters;

 private:
  TransportCallbacks callbacks_;  // only on the daemon's strand
  bool stopped_ = false;          // only on the daemon's strand
};

}  // namespace mesh::node

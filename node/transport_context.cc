// Shared state of the gossip transport (node/transport_context.h).
#include "node/transport_context.h"

#include <chrono>
#include <utility>

namespace mesh::node {

TransportCounters AtomicTransportCounters::snapshot() const {
  TransportCounters out;
#define MESH_TRANSPORT_SNAPSHOT_FIELD(name) out.name = name.load(std::memory_order_relaxed);
  MESH_TRANSPORT_COUNTERS(MESH_TRANSPORT_SNAPSHOT_FIELD)
#undef MESH_TRANSPORT_SNAPSHOT_FIELD
  return out;
}

UnixMs wall_clock_ms() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

TransportContext::TransportContext(boost::asio::io_context& io_context,
                                   DaemonPost post_to_daemon_strand,
                                   TransportSettings transport_settings,
                                   std::optional<boost::asio::ip::address> source,
                                   TransportCallbacks callbacks)
    : io(io_context),
      post_to_daemon(std::move(post_to_daemon_strand)),
      settings(std::move(transport_settings)),
      source_address(std::move(source)),
      callbacks_(std::move(callbacks)) {}

void TransportContext::report_path_failed(const ServerId& peer) {
  count(counters.paths_failed);
  if (!callbacks_.on_path_failed) return;
  post_to_daemon([self = shared_from_this(), peer] {
    if (!self->stopped_) self->callbacks_.on_path_failed(peer);
  });
}

void TransportContext::report_path_up(const ServerId& peer) {
  count(counters.paths_up);
  if (!callbacks_.on_path_up) return;
  post_to_daemon([self = shared_from_this(), peer] {
    if (!self->stopped_) self->callbacks_.on_path_up(peer);
  });
}

void TransportContext::deliver(Bytes frame, InboundId inbound, std::function<void()> resume) {
  // std::function needs a copyable task: the frame travels in a shared_ptr.
  auto shared_frame = std::make_shared<Bytes>(std::move(frame));
  post_to_daemon([self = shared_from_this(), shared_frame, inbound, resume = std::move(resume)] {
    if (!self->stopped_) self->callbacks_.on_frame(std::move(*shared_frame), inbound);
    resume();
  });
}

}  // namespace mesh::node

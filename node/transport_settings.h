// The gossip transport's settings, error values and counters
// (docs/PROTOCOL.md, "2a. Transport"). Plain values: no Asio here, so the
// daemon's config and status code can include this header cheaply.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "common/server_id.h"
#include "common/time.h"
#include "gossip/config.h"
#include "record/roster.h"

namespace mesh::node {

// Every bound of the transport, and what happens at it.
struct TransportSettings {
  // This node's id. Of two connections between a pair (each side opened
  // one), frames go on the one the smaller id opened (docs/PROTOCOL.md §2a).
  ServerId self;
  Endpoint listen;                  // IP literal ("0.0.0.0", "::", "10.0.0.5") and port; port 0 = any
  std::string source_address;       // IP literal outgoing connections bind to; "" = any
  DurationMs connect_timeout_ms = 5'000;   // resolve + connect of one attempt; then backoff
  DurationMs idle_timeout_ms = 300'000;    // no whole frame either way this long: close
  DurationMs read_timeout_ms = 30'000;     // a frame started must be read whole within this (slowloris)
  // An accepted connection must carry a frame that opens as a member's
  // (the daemon adopts it) within this, or it is closed: an outsider's
  // connection, whatever it sends, holds a place for seconds.
  DurationMs auth_timeout_ms = 5'000;
  DurationMs write_timeout_ms = 30'000;    // a frame handed to the socket must be written within this
  // TCP_USER_TIMEOUT of the connections frames are written on (ours, and a
  // peer's once adopted): data written and not acknowledged this long
  // breaks the connection, and the path counts as failed (reported to the
  // gossip core, docs/PROTOCOL.md §4a "Failed").
  DurationMs user_timeout_ms = 20'000;
  std::size_t queue_bytes_max = 8u << 20;  // per peer; at the bound new frames are dropped and counted
  // A frame that waited this long for its peer (down, or out of reach) is
  // dropped and counted: the link-up SYNC repairs what the peer lacks,
  // and a peer back after minutes gets the fleet's news, not its past.
  DurationMs queue_age_max_ms = 30'000;
  DurationMs backoff_min_ms = 1'000;       // reconnect delay after the first failure: [min, 2 min]
  DurationMs backoff_max_ms = 60'000;      // ceiling of the exponential backoff
  // Accepted connections at once. When full, a newcomer takes the place of
  // an unauthenticated one (node/inbound_admission.h); refused only when
  // every connection is a member's.
  std::size_t inbound_connections_max = 512;
  // Unauthenticated accepted connections of one source (an IPv4 address,
  // an IPv6 /64); a newcomer beyond it takes the place of one of its own.
  std::size_t inbound_unauthenticated_per_source_max = 8;
  std::size_t peer_links_max = kRosterServersMax;  // outgoing links at once; beyond: frame dropped, counted
  std::size_t frame_bytes_max = gossip::kFrameBytesMax;  // larger (or empty) announced frames close the connection
};

// Transport errors, by what failed. Append-only.
enum class TransportError {
  bad_address,     // listen or source address is not an IP literal
  bind_failed,     // the listen address cannot be bound (in use, not ours, no permission)
  listen_failed,   // listen() refused
  not_idle,        // start() after start() or stop()
};

// Every counter with its one-line meaning (docs/PROTOCOL.md, "2a. Transport").
// Monotonic for the life of one Transport.
#define MESH_TRANSPORT_COUNTERS(X)                                                              \
  X(frames_sent)                  /* frames written whole (on an outgoing or an adopted connection) */ \
  X(bytes_sent)                   /* frame bytes written (prefixes excluded) */               \
  X(frames_received)              /* frames read whole on any connection, handed to on_frame */ \
  X(bytes_received)               /* frame bytes read whole (prefixes excluded) */            \
  X(frames_dropped_queue_full)    /* send(): the peer's queue was at queue_bytes_max */       \
  X(frames_dropped_oversize)      /* send(): an empty frame or one above frame_bytes_max */   \
  X(frames_dropped_stopped)       /* send() before start() succeeded or after stop() */      \
  X(frames_dropped_links_full)    /* send(): a new peer while peer_links_max links exist */   \
  X(frames_dropped_link_closed)   /* queued frames discarded by retain_peers() or stop() */   \
  X(frames_dropped_stale)         /* queued frames that waited queue_age_max_ms for the peer */ \
  X(frames_oversize)              /* a prefix announced 0 or > frame_bytes_max: connection closed */ \
  X(frames_read_timeout)          /* a frame started was not whole within read_timeout_ms: closed */ \
  X(frames_write_timeout)         /* a frame was not written within write_timeout_ms: closed */ \
  X(connect_attempts)             /* outgoing attempts started (resolve + connect) */         \
  X(connect_failures)             /* attempts that failed (resolve, refused, timeout): backoff follows */ \
  X(connect_timeouts)             /* of those, attempts abandoned at connect_timeout_ms */    \
  X(connections_opened)           /* outgoing connections established */                       \
  X(connections_accepted)         /* inbound connections accepted and served */               \
  X(inbound_refused)              /* inbound connections closed at once: inbound_connections_max open, all members' */ \
  X(inbound_evicted)              /* unauthenticated connections closed to give their place to a newcomer */ \
  X(inbound_source_full)          /* of those, because the newcomer's source held its unauthenticated maximum */ \
  X(inbound_unauthenticated_closed) /* accepted connections closed: no member's frame within auth_timeout_ms */ \
  X(connections_idle_closed)      /* closed after idle_timeout_ms with no frame either way */ \
  X(connections_closed_by_peer)   /* the other side closed (EOF) */                           \
  X(connections_closed_error)     /* a read, write or socket error closed the connection */   \
  X(connections_timed_out)        /* of those, outgoing ones whose data went unacknowledged for user_timeout_ms, or unreachable */ \
  X(paths_failed)                 /* connects timed out or unreachable, connections timed out: reported to the gossip core */ \
  X(paths_up)                     /* connections established or adopted: reported to the gossip core */ \
  X(inbound_adopted)              /* accepted connections that carried a member's sealed frame: frames for it may go on them */ \
  X(frames_sent_inbound)          /* of frames_sent, those written on an adopted connection */ \
  X(retries_now)                  /* retry_now() calls that cut reconnect backoffs short */ \
  X(links_retired)                /* outgoing links closed because retain_peers() left them out */ \
  X(accept_errors)                /* accept() failed (e.g. out of descriptors); retried after a pause */

struct TransportCounters {
#define MESH_TRANSPORT_COUNTER_FIELD(name) std::uint64_t name = 0;
  MESH_TRANSPORT_COUNTERS(MESH_TRANSPORT_COUNTER_FIELD)
#undef MESH_TRANSPORT_COUNTER_FIELD

  // Calls fn(const char* name, std::uint64_t value) for every counter, in declaration order.
  template <class Fn>
  void for_each(Fn&& fn) const {
#define MESH_TRANSPORT_COUNTER_VISIT(name) fn(#name, name);
    MESH_TRANSPORT_COUNTERS(MESH_TRANSPORT_COUNTER_VISIT)
#undef MESH_TRANSPORT_COUNTER_VISIT
  }
};

// The state of one link (one per peer the core sends to, or whose
// connection was adopted).
struct PeerLinkStats {
  ServerId peer;
  Endpoint endpoint;               // where the link connects (the last `to` given to send)
  bool connected = false;          // a connection frames can go on is open (ours or the peer's adopted one)
  UnixMs last_frame_ms = 0;        // last frame read from the peer on one of them; 0 = never
  std::size_t queued_bytes = 0;    // frame bytes waiting (including the one being written)
  std::uint32_t connect_failures_in_row = 0;  // failed attempts since the last frame written
};

struct TransportStats {
  TransportCounters counters;
  std::vector<PeerLinkStats> peers;  // sorted by peer id
  std::size_t inbound_connections = 0;
  std::size_t inbound_unauthenticated = 0;  // of those, not (yet) carrying a member's frame
};

}  // namespace mesh::node

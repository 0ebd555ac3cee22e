// Which accepted gossip connections the transport keeps (docs/PROTOCOL.md
// §2a, "Who may hold a connection"): the bookkeeping of node/listener.cc,
// kept apart so that its rules are plain values in and decisions out (no
// socket, no clock; the listener calls it on its strand).
//
// An accepted connection is *unauthenticated* until it carries a frame
// that opens as a member's (the daemon then adopts it: authenticated()).
// Members' connections authenticate within milliseconds of being opened;
// an outsider's never do. So:
//   - a source (an IPv4 address, an IPv6 /64) holds at most
//     `unauthenticated_per_source_max` unauthenticated connections; a
//     newcomer beyond that takes the place of one of that source's own;
//   - when the table holds `connections_max`, a newcomer takes the place of
//     an unauthenticated connection; when every connection is
//     authenticated, the newcomer is refused;
//   - the place given up is taken from the sources that hold the most
//     unauthenticated connections (as Bitcoin Core evicts from the network
//     group with the most peers): among their connections, the *silent* one
//     (no whole frame yet) that came first, else the unauthenticated one
//     that came first. A member holds one connection to a peer, so while
//     any source holds two, a member's new connection keeps its place
//     however fast a flood churns and however long the member takes to
//     send its first frame (the sanitized fleet suite's finding: a
//     restarting member, slow to send it, was the oldest silent connection
//     at a table that turned over in a third of a second). Only a flood
//     from more sources than the table has places, one connection each,
//     can push it out, and then the member's connection, which has sent
//     its frame by the time the next ones arrive, still outlasts the idle
//     ones; an authenticated connection never gives way.
// The listener also closes an unauthenticated connection after
// auth_timeout_ms (TransportSettings), so what an outsider holds lasts
// seconds, whatever it sends.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <unordered_map>
#include <utility>

namespace mesh::node {

// A connection's source as 16 bytes: an IPv4 address mapped (::ffff:a.b.c.d),
// or the /64 of an IPv6 address (the rest zero): one host's share.
using InboundSource = std::array<std::uint8_t, 16>;
InboundSource inbound_source_v4(std::uint32_t host_order);
InboundSource inbound_source_v6(const std::array<std::uint8_t, 16>& address);

struct InboundLimits {
  std::size_t connections_max = 512;
  std::size_t unauthenticated_per_source_max = 8;
};

struct InboundDecision {
  enum class Outcome {
    admitted,
    admitted_source_full,  // admitted in the place of one of its source's own
    admitted_table_full,   // admitted in the place of another unauthenticated connection
    refused,               // full of authenticated connections
  };
  Outcome outcome = Outcome::admitted;
  std::optional<std::uint64_t> evict;  // to close (already forgotten here)

  bool admitted() const { return outcome != Outcome::refused; }
};

class InboundAdmission {
 public:
  explicit InboundAdmission(InboundLimits limits) : limits_(limits) {}

  // A connection `id` (new, unique) from `from` asks for a place.
  InboundDecision admit(std::uint64_t id, const InboundSource& from);
  // A whole frame arrived on it (it is no longer silent).
  void heard(std::uint64_t id);
  // A member's frame opened on it: it never gives way from now on.
  void authenticated(std::uint64_t id);
  // It closed. Idempotent; unknown ids are ignored.
  void closed(std::uint64_t id);

  std::size_t open() const { return entries_.size(); }
  std::size_t authenticated_count() const { return entries_.size() - unauthenticated_count(); }
  std::size_t unauthenticated_count() const;

 private:
  // Unauthenticated connections by arrival: (arrival, id), first first.
  using Queue = std::set<std::pair<std::uint64_t, std::uint64_t>>;
  struct Entry {
    InboundSource source;
    std::uint64_t arrival = 0;
    bool heard = false;
    bool authenticated = false;
  };
  struct SourceQueues {
    Queue silent, heard;
    std::size_t size() const { return silent.size() + heard.size(); }
  };

  // The connection to give way from these queues: the first silent, else the first heard.
  static std::optional<std::uint64_t> first_of(const SourceQueues& queues);
  // Moves a source's connections between levels_ as its count goes from
  // `from` to `to` (at most unauthenticated_per_source_max of them).
  void relevel(const SourceQueues& source, std::size_t from, std::size_t to);
  void forget(std::uint64_t id);

  InboundLimits limits_;
  std::unordered_map<std::uint64_t, Entry> entries_;
  std::map<InboundSource, SourceQueues> sources_;  // unauthenticated only
  // Unauthenticated connections by how many their source holds: the last
  // level gives way first.
  std::map<std::size_t, SourceQueues> levels_;
  std::uint64_t arrivals_ = 0;
};

}  // namespace mesh::node

// Which connections the API keeps when it is full (docs/API.md, "Under a
// connection flood"): the bookkeeping of node/api/server.cc, kept apart so
// that its rules are plain values in and decisions out (no socket, no
// clock, no lock: the server holds its own lock around every call).
//
// The rules:
//   - an address holds at most `per_address_max` connections; more are
//     refused at once;
//   - a connection that presented a valid token (trusted) is never closed
//     to make room for another;
//   - when the table is full, a newcomer takes the place of the untrusted
//     connection that has waited longest for its request, of the address
//     that holds the most untrusted connections in the network (an IPv4
//     /24, an IPv6 /64) that holds the most; but only when the newcomer's
//     address holds no untrusted connection, or that source holds at least
//     two more than the newcomer's (its network than the newcomer's
//     network, or, in the same network, its address than the newcomer's
//     address). One more would only swap the two: the flood would churn
//     its own connections. Otherwise the newcomer is refused.
// So a flood cannot push out the connections of a quieter network or
// address, and a poller from anywhere else, or from the flood's own
// network, gets a place however many connections the flood keeps open.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <unordered_map>
#include <utility>

namespace mesh::api {

// A source address as 16 bytes: IPv6, or IPv4 mapped (::ffff:a.b.c.d).
struct SourceAddress {
  std::array<std::uint8_t, 16> bytes{};

  static SourceAddress v4(std::uint32_t host_order);
  static SourceAddress v6(const std::array<std::uint8_t, 16>& bytes);
  bool is_v4() const;
  // Its network: the /24 of an IPv4 address, the /64 of an IPv6 one.
  SourceAddress network() const;
  auto operator<=>(const SourceAddress&) const = default;
};

struct AdmissionLimits {
  std::size_t connections_max = 0;
  std::size_t per_address_max = 0;
};

using ConnectionId = std::uint64_t;

struct AdmitDecision {
  enum class Outcome {
    admitted,
    address_full,  // the address holds per_address_max: refused
    server_full,   // full, and no untrusted connection may give way: refused
  };
  Outcome outcome = Outcome::admitted;
  ConnectionId id = 0;                // when admitted
  std::optional<ConnectionId> evict;  // to close: its place is the newcomer's (already removed)

  bool admitted() const { return outcome == Outcome::admitted; }
};

class Admission {
 public:
  explicit Admission(AdmissionLimits limits) : limits_(limits) {}

  AdmitDecision admit(const SourceAddress& from);
  // The connection presented a valid token: it is never evicted from now on.
  void trust(ConnectionId id);
  // The connection starts to wait for a request (after an answer): its
  // wait, which orders evictions, starts again.
  void waiting(ConnectionId id);
  // The connection is gone. Idempotent; unknown ids are ignored.
  void close(ConnectionId id);

  std::size_t open() const { return entries_.size(); }
  std::size_t trusted() const { return trusted_; }

 private:
  struct Entry {
    SourceAddress address;
    std::uint64_t since = 0;  // when its wait began, in admission events
    bool trusted = false;
  };
  struct AddressState {
    std::size_t connections = 0;                                  // trusted or not
    std::set<std::pair<std::uint64_t, ConnectionId>> untrusted;  // by `since`, oldest first
  };
  // How greedy an address is: its network's untrusted connections, then its own.
  using Greed = std::pair<std::size_t, std::size_t>;

  Greed greed_of(const SourceAddress& address) const;
  struct Candidate {
    ConnectionId id = 0;
    SourceAddress address;
    Greed greed;
  };
  // The untrusted connection to evict first.
  std::optional<Candidate> eviction_candidate() const;
  // Whether `candidate`'s source must give way to a newcomer from `from`.
  bool gives_way(const Candidate& candidate, const SourceAddress& from) const;
  void forget_untrusted(const Entry& entry, ConnectionId id);

  AdmissionLimits limits_;
  std::unordered_map<ConnectionId, Entry> entries_;
  std::map<SourceAddress, AddressState> addresses_;
  std::map<SourceAddress, std::size_t> untrusted_per_network_;
  std::size_t trusted_ = 0;
  ConnectionId next_id_ = 1;
  std::uint64_t events_ = 0;  // a logical clock: admissions and waits, in order
};

}  // namespace mesh::api

// Watching a scenario through the API of every running node: when the
// expected state appeared at each node, and every false verdict on the way
// (a server shown in a state the scenario does not allow, at any node).
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "tests/e2e/fleet.h"

namespace mesh::test::e2e {

using Clock = std::chrono::steady_clock;
using std::chrono::seconds;

class Watch {
 public:
  // Watches `nodes`; the fault's clock starts now.
  Watch(const Fleet& fleet, std::vector<std::uint32_t> nodes);

  // `server` may show these statuses besides ok without it being false.
  void allow(const ServerId& server, std::set<std::string> statuses);
  void allow_everywhere(std::set<std::string> statuses) { allowed_any_ = std::move(statuses); }
  // Node `node` may show these statuses for any server: a node that has
  // just started shows no_data until the fleet's fresh reports reach it.
  void allow_at(std::uint32_t node, std::set<std::string> statuses) { allowed_at_[node] = std::move(statuses); }
  // Restarts the fault's clock (time to verdict counts from here).
  void restart_clock() { start_ = Clock::now(); }
  // Also polls each node's GET /v1/mesh and counts the changes of its
  // `partitioned` flag (partition_flips()).
  void watch_partitioned() { watch_partitioned_ = true; }
  // The most changes of the `partitioned` flag at one node since the watch
  // began (the first answer of each node sets its starting value).
  std::size_t partition_flips() const;

  // Polls every node every 500 ms until `done(node, servers)` holds at every
  // node (the first time at each is kept), for at most `limit`.
  using Done = std::function<bool(std::uint32_t node, const ServerMap& servers)>;
  bool until(const Done& done, Clock::duration limit);
  // Polls for `duration`, looking for false verdicts only.
  void hold(Clock::duration duration);
  // One poll of every node, looking for false verdicts only.
  void poll() { sweep(nullptr); }

  // Seconds from the fault to the slowest node's first `done` (nullopt
  // before every node got there).
  std::optional<double> slowest_s() const;
  // Each node's first `done`, in seconds from the fault.
  const std::map<std::uint32_t, double>& reached_s() const { return reached_s_; }
  std::size_t false_verdicts() const { return false_.size(); }
  // "n3 at n7: unreachable at 47.5 s (failing 3 of 5, quorum 3)", the
  // first few, for messages. The node's GET /v1/servers/<id> and
  // /v1/mesh at that poll are kept beside its log (false-<id>-<at>.json).
  std::string false_text() const;

 private:
  void sweep(const Done* done);
  std::string first_seen(std::uint32_t node, const ServerId& id, const Json& server) const;

  const Fleet& fleet_;
  std::vector<std::uint32_t> nodes_;
  Clock::time_point start_;
  std::map<ServerId, std::set<std::string>> allowed_;
  std::set<std::string> allowed_any_;
  std::map<std::uint32_t, std::set<std::string>> allowed_at_;
  std::map<std::uint32_t, double> reached_s_;
  std::map<std::string, std::string> false_;  // "server at node: status" -> when and the counts
  bool watch_partitioned_ = false;
  std::map<std::uint32_t, bool> partitioned_;       // last flag seen per node
  std::map<std::uint32_t, std::size_t> flips_;      // changes per node
};

// Until every node in `nodes` holds every origin at a seq at least as new
// as any of them held at the call, with one fingerprint per (origin, seq)
// (GET /v1/mesh/records): records in flight land, none is lost. Seconds it
// took, or nullopt after `limit`.
std::optional<double> converge(const Fleet& fleet, const std::vector<std::uint32_t>& nodes,
                               Clock::duration limit);

// Until every node in `nodes` holds, of every member, a report at least as
// new as the one that member had signed `lag` before this poll
// (`signed_ms` of GET /v1/mesh/records; the nodes share this machine's
// clock): the member's own latest when it is older than that, else one
// signed no earlier than `lag` + `heartbeat` ago (a member signs at least
// one report per heartbeat). Seconds it took, or nullopt after `limit`.
// `between` runs between two polls (another watch may poll meanwhile).
std::optional<double> converge_signed(const Fleet& fleet, const std::vector<std::uint32_t>& nodes,
                                      std::chrono::milliseconds lag, std::chrono::milliseconds heartbeat,
                                      Clock::duration limit, const std::function<void()>& between = nullptr);

}  // namespace mesh::test::e2e

// A private test network of separate hosts: one Linux network namespace per
// host, each with a veth pair into one bridge, and private addresses
// (10.77.0.0/24) that exist inside this test's own network namespace only,
// so nothing reaches the machine's real network. Faults are nftables rule
// sets inside a host's namespace (one table, `inet e2e`, replaced whole).
//
// The test program first moves itself into a fresh network namespace
// (enter_private_network()): the bridge and the hosts' veth ends live there
// and vanish with the program. The hosts' namespaces are named (ip netns),
// so their processes can be started with `ip netns exec`; the destructor
// deletes them.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace mesh::test::e2e {

// Why this machine cannot run the suite (not root, no ip or nft, no network
// namespaces), or nullopt when it can. Checked before anything is made.
std::optional<std::string> why_no_namespaces();

// unshare(CLONE_NEWNET) for the calling process, and `lo` up in it.
// REQUIRES: no other thread yet. False with errno on failure.
bool enter_private_network();

// The full path of a program on PATH or in /usr/sbin, /sbin; "" when absent.
std::string find_program(const std::string& name);

class TestNetwork {
 public:
  // `hosts` namespaces with addresses 10.77.0.1.. in host order; the test
  // program (this process) is 10.77.0.254 on the bridge. Throws on failure.
  explicit TestNetwork(std::uint32_t hosts, const std::string& work_dir);
  ~TestNetwork();
  TestNetwork(const TestNetwork&) = delete;
  TestNetwork& operator=(const TestNetwork&) = delete;

  // One more host, with the next address; its index.
  std::uint32_t add_host();
  std::uint32_t size() const { return static_cast<std::uint32_t>(names_.size()); }
  static std::string address(std::uint32_t host);
  static std::string self_address() { return "10.77.0.254"; }
  const std::string& ns_name(std::uint32_t host) const { return names_[host]; }

  // argv run inside host's namespace: {ip, netns, exec, NAME, argv...}.
  std::vector<std::string> in_host(std::uint32_t host, const std::vector<std::string>& argv) const;

  // Replaces host's fault rules with `rules`: nft statements, one per line,
  // for the chains `input` and `output` (each `type filter hook ...
  // priority 0; policy accept`). An empty list lifts every fault.
  struct Rules {
    std::vector<std::string> input;
    std::vector<std::string> output;
  };
  void set_rules(std::uint32_t host, const Rules& rules);
  void clear_rules(std::uint32_t host) { set_rules(host, {}); }
  void clear_all_rules();
  // `nft list table inet e2e` in host's namespace (the rules with their
  // counters).
  std::string list_rules(std::uint32_t host) const;
  // Adds jitter to host's eth0 with tc netem; the reason it can't, or
  // nullopt when it did (this suite's kernels often have no netem).
  std::optional<std::string> add_jitter(std::uint32_t host, const std::string& delay, const std::string& spread);
  void remove_jitter(std::uint32_t host);

 private:
  void run(const std::vector<std::string>& argv) const;

  std::string work_dir_;
  std::string ip_, nft_;
  std::string prefix_;
  std::vector<std::string> names_;
};

}  // namespace mesh::test::e2e

#include "tests/e2e/netns.h"

#include <sched.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <stdexcept>

#include "tests/tools/run_process.h"

namespace mesh::test::e2e {

std::string find_program(const std::string& name) {
  std::string path = std::getenv("PATH") != nullptr ? std::getenv("PATH") : "";
  path += ":/usr/sbin:/sbin:/usr/bin:/bin";
  std::stringstream dirs(path);
  for (std::string dir; std::getline(dirs, dir, ':');) {
    if (dir.empty()) continue;
    const std::string candidate = dir + "/" + name;
    if (::access(candidate.c_str(), X_OK) == 0) return candidate;
  }
  return "";
}

std::optional<std::string> why_no_namespaces() {
  if (::geteuid() != 0) return "not root: network namespaces, veth pairs and nftables need root";
  for (const char* tool : {"ip", "nft"}) {
    if (find_program(tool).empty()) {
      return std::string("no `") + tool + "` on this machine (Debian: iproute2, nftables)";
    }
  }
  const ProcessResult check = run_process({find_program("nft"), "--version"});
  if (check.exit_code != 0) return "`nft --version` failed: " + check.err;
  return std::nullopt;
}

bool enter_private_network() {
  if (::unshare(CLONE_NEWNET) != 0) return false;
  return run_process({find_program("ip"), "link", "set", "lo", "up"}).exit_code == 0;
}

TestNetwork::TestNetwork(std::uint32_t hosts, const std::string& work_dir)
    : work_dir_(work_dir), ip_(find_program("ip")), nft_(find_program("nft")),
      prefix_("mne2e-" + std::to_string(::getpid()) + "-") {
  run({ip_, "link", "add", "e2e-br", "type", "bridge"});
  run({ip_, "addr", "add", self_address() + "/24", "dev", "e2e-br"});
  run({ip_, "link", "set", "e2e-br", "up"});
  for (std::uint32_t i = 0; i < hosts; ++i) add_host();
}

TestNetwork::~TestNetwork() {
  for (const std::string& name : names_) (void)run_process({ip_, "netns", "del", name});
}

std::uint32_t TestNetwork::add_host() {
  const auto host = size();
  const std::string name = prefix_ + std::to_string(host + 1);
  const std::string veth = "e2e-v" + std::to_string(host + 1);
  run({ip_, "netns", "add", name});
  names_.push_back(name);
  run({ip_, "link", "add", veth, "type", "veth", "peer", "name", "eth0", "netns", name});
  run({ip_, "link", "set", veth, "master", "e2e-br"});
  run({ip_, "link", "set", veth, "up"});
  run(in_host(host, {ip_, "addr", "add", address(host) + "/24", "dev", "eth0"}));
  run(in_host(host, {ip_, "link", "set", "eth0", "up"}));
  run(in_host(host, {ip_, "link", "set", "lo", "up"}));
  clear_rules(host);
  return host;
}

std::string TestNetwork::address(std::uint32_t host) { return "10.77.0." + std::to_string(host + 1); }

std::vector<std::string> TestNetwork::in_host(std::uint32_t host, const std::vector<std::string>& argv) const {
  std::vector<std::string> out{ip_, "netns", "exec", names_.at(host)};
  out.insert(out.end(), argv.begin(), argv.end());
  return out;
}

void TestNetwork::set_rules(std::uint32_t host, const Rules& rules) {
  // Declared, deleted and declared again in one transaction: the old rules
  // go and the new ones come at once, and no packet sees neither.
  std::string text = "table inet e2e\ndelete table inet e2e\ntable inet e2e {\n";
  auto chain = [&](const char* name, const std::vector<std::string>& lines) {
    text += std::string("  chain ") + name + " {\n    type filter hook " + name +
            " priority 0; policy accept;\n";
    for (const std::string& line : lines) text += "    " + line + "\n";
    text += "  }\n";
  };
  chain("input", rules.input);
  chain("output", rules.output);
  text += "}\n";
  const std::string path = work_dir_ + "/rules-" + std::to_string(host + 1) + ".nft";
  std::ofstream(path, std::ios::trunc) << text;
  run(in_host(host, {nft_, "-f", path}));
}

void TestNetwork::clear_all_rules() {
  for (std::uint32_t i = 0; i < size(); ++i) clear_rules(i);
}

std::string TestNetwork::list_rules(std::uint32_t host) const {
  return run_process(in_host(host, {nft_, "list", "table", "inet", "e2e"})).out;
}

std::optional<std::string> TestNetwork::add_jitter(std::uint32_t host, const std::string& delay,
                                                   const std::string& spread) {
  const std::string tc = find_program("tc");
  if (tc.empty()) return "no `tc` on this machine";
  const ProcessResult result =
      run_process(in_host(host, {tc, "qdisc", "add", "dev", "eth0", "root", "netem", "delay", delay, spread}));
  if (result.exit_code == 0) return std::nullopt;
  std::string why = result.err;
  while (!why.empty() && (why.back() == '\n' || why.back() == '.')) why.pop_back();
  return "tc netem refused (" + why + "): this kernel has no netem";
}

void TestNetwork::remove_jitter(std::uint32_t host) {
  (void)run_process(in_host(host, {find_program("tc"), "qdisc", "del", "dev", "eth0", "root"}));
}

void TestNetwork::run(const std::vector<std::string>& argv) const {
  const ProcessResult result = run_process(argv);
  if (result.exit_code != 0) {
    std::string line;
    for (const std::string& a : argv) line += a + " ";
    throw std::runtime_error("`" + line + "` failed (" + std::to_string(result.exit_code) + "): " + result.err);
  }
}

}  // namespace mesh::test::e2e

#include "tests/e2e/watch.h"

#include <algorithm>
#include <fstream>
#include <iostream>
#include <thread>

namespace mesh::test::e2e {
namespace {

constexpr auto kStep = std::chrono::milliseconds(500);

double since_s(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

}  // namespace

Watch::Watch(const Fleet& fleet, std::vector<std::uint32_t> nodes)
    : fleet_(fleet), nodes_(std::move(nodes)), start_(Clock::now()) {}

void Watch::allow(const ServerId& server, std::set<std::string> statuses) {
  allowed_[server].insert(statuses.begin(), statuses.end());
}

void Watch::sweep(const Done* done) {
  for (std::uint32_t node : nodes_) {
    const auto servers = fleet_.servers(node);
    if (!servers) continue;  // a node that does not answer this moment shows nothing
    const auto at = allowed_at_.find(node);
    for (const auto& [id, server] : *servers) {
      const std::string status = server.at("status").get<std::string>();
      if (status == "ok" || allowed_any_.count(status) != 0) continue;
      if (at != allowed_at_.end() && at->second.count(status) != 0) continue;
      auto it = allowed_.find(id);
      if (it != allowed_.end() && it->second.count(status) != 0) continue;
      const std::string key = id + " at " + fleet_.id(node) + ": " + status;
      if (false_.count(key) == 0) false_[key] = first_seen(node, id, server);
    }
    if (done != nullptr && reached_s_.count(node) == 0 && (*done)(node, *servers)) {
      reached_s_[node] = since_s(start_);
    }
    if (!watch_partitioned_) continue;
    const auto mesh = fleet_.get(node, "/v1/mesh");
    if (!mesh) continue;
    const bool partitioned = mesh->at("partitioned").get<bool>();
    auto [last, first] = partitioned_.try_emplace(node, partitioned);
    if (!first && last->second != partitioned) ++flips_[node];
    last->second = partitioned;
  }
}

// When a false verdict first shows, and why: the witness counts, and the
// node's detail of the server and its mesh view, kept for the post-mortem
// (a hidden run's failure is read from these files and the logs).
std::string Watch::first_seen(std::uint32_t node, const ServerId& id, const Json& server) const {
  const double at = since_s(start_);
  std::string counts;
  if (server.contains("witnesses")) {
    const Json& w = server.at("witnesses");
    counts = "failing " + w.value("failing", Json(0)).dump() + " of " + w.value("eligible", Json(0)).dump() +
             ", quorum " + w.value("quorum", Json(0)).dump();
  }
  const std::string file = fleet_.dir() + "/false-" + id + "-at-" + fleet_.id(node) + "-" +
                           std::to_string(static_cast<long>(at * 10)) + ".json";
  Json kept = Json::object();
  kept["server"] = server;
  if (auto detail = fleet_.get(node, "/v1/servers/" + id)) kept["detail"] = *detail;
  if (auto mesh = fleet_.get(node, "/v1/mesh")) kept["mesh"] = *mesh;
  std::ofstream(file) << kept.dump(1) << "\n";
  char when[32];
  std::snprintf(when, sizeof when, "%.1f", at);
  std::cout << "e2e:   false verdict " << id << " at " << fleet_.id(node) << ": "
            << server.at("status").get<std::string>() << " " << when << " s after the fault (" << counts
            << "), kept in " << file << std::endl;
  return std::string(when) + " s (" + counts + ")";
}

std::size_t Watch::partition_flips() const {
  std::size_t most = 0;
  for (const auto& [node, flips] : flips_) most = std::max(most, flips);
  return most;
}

bool Watch::until(const Done& done, Clock::duration limit) {
  reached_s_.clear();
  const auto deadline = Clock::now() + limit;
  for (;;) {
    sweep(&done);
    if (reached_s_.size() == nodes_.size()) return true;
    if (Clock::now() >= deadline) return false;
    std::this_thread::sleep_for(kStep);
  }
}

void Watch::hold(Clock::duration duration) {
  const auto end = Clock::now() + duration;
  while (Clock::now() < end) {
    sweep(nullptr);
    std::this_thread::sleep_for(kStep);
  }
}

std::optional<double> Watch::slowest_s() const {
  if (reached_s_.size() != nodes_.size()) return std::nullopt;
  double slowest = 0;
  for (const auto& [node, s] : reached_s_) slowest = std::max(slowest, s);
  return slowest;
}

std::string Watch::false_text() const {
  std::string out;
  int shown = 0;
  for (const auto& [line, when] : false_) {
    if (shown++ == 5) return out + "...";
    out += line + " at " + when + "; ";
  }
  return out;
}

std::optional<double> converge(const Fleet& fleet, const std::vector<std::uint32_t>& nodes,
                               Clock::duration limit) {
  const auto start = Clock::now();
  using Held = std::map<std::string, std::pair<std::uint64_t, std::string>>;  // origin -> seq, fp
  auto held_at = [&](std::uint32_t node) -> std::optional<Held> {
    auto list = fleet.get(node, "/v1/mesh/records");
    if (!list) return std::nullopt;
    Held held;
    for (const auto& r : *list) {
      held[r.at("kind").get<std::string>() + "/" + r.at("origin").get<std::string>()] = {
          r.at("seq").get<std::uint64_t>(), r.at("fingerprint").get<std::string>()};
    }
    return held;
  };
  std::map<std::string, std::uint64_t> newest;
  for (std::uint32_t node : nodes) {
    if (auto held = held_at(node)) {
      for (const auto& [origin, record] : *held) newest[origin] = std::max(newest[origin], record.first);
    }
  }
  const auto deadline = start + limit;
  for (;;) {
    bool done = !newest.empty();
    std::map<std::pair<std::string, std::uint64_t>, std::string> seen;
    for (std::uint32_t node : nodes) {
      const auto held = held_at(node);
      if (!held) {
        done = false;
        break;
      }
      for (const auto& [origin, seq] : newest) {
        auto it = held->find(origin);
        if (it == held->end() || it->second.first < seq) done = false;
      }
      for (const auto& [origin, record] : *held) {
        auto [at, fresh] = seen.try_emplace({origin, record.first}, record.second);
        if (!fresh && at->second != record.second) done = false;
      }
    }
    if (done) return since_s(start);
    if (Clock::now() >= deadline) return std::nullopt;
    std::this_thread::sleep_for(std::chrono::milliseconds(250));
  }
}

std::optional<double> converge_signed(const Fleet& fleet, const std::vector<std::uint32_t>& nodes,
                                      std::chrono::milliseconds lag, std::chrono::milliseconds heartbeat,
                                      Clock::duration limit, const std::function<void()>& between) {
  const auto start = Clock::now();
  using Signed = std::map<std::string, std::int64_t>;  // report origin -> signed_ms of the held record
  for (;;) {
    const std::int64_t cutoff = std::chrono::duration_cast<std::chrono::milliseconds>(
                                    std::chrono::system_clock::now().time_since_epoch() - lag)
                                    .count();
    std::map<std::uint32_t, Signed> held;
    bool answered = true;
    for (std::uint32_t node : nodes) {
      auto list = fleet.get(node, "/v1/mesh/records");
      if (!list) {
        answered = false;
        break;
      }
      for (const auto& r : *list) {
        if (r.at("kind") == "report") held[node][r.at("origin").get<std::string>()] = r.at("signed_ms").get<std::int64_t>();
      }
    }
    bool done = answered;
    for (std::uint32_t origin = 0; done && origin < fleet.size(); ++origin) {
      if (held.count(origin) == 0) continue;  // not polled (not in `nodes`)
      const ServerId id = fleet.id(origin);
      const std::int64_t own = held[origin][id];
      const std::int64_t due = own <= cutoff ? own : cutoff - heartbeat.count();
      for (std::uint32_t node : nodes) {
        auto it = held[node].find(id);
        if (it == held[node].end() || it->second < due) done = false;
      }
    }
    if (done) return since_s(start);
    if (Clock::now() - start >= limit) return std::nullopt;
    if (between) between();
    std::this_thread::sleep_for(std::chrono::milliseconds(250));
  }
}

}  // namespace mesh::test::e2e

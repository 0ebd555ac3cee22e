#include "tests/verdict/fixtures.h"

#include <algorithm>
#include <cctype>

namespace mesh::verdict::testing {
namespace {

std::string lower(std::string text) {
  for (char& c : text) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return text;
}

}  // namespace

Roster make_roster(const std::vector<std::string>& countries,
                   const std::vector<std::uint32_t>& per_country,
                   std::uint32_t witnesses_per_country) {
  Roster roster;
  roster.version = 7;
  roster.params.witnesses_per_country = witnesses_per_country;
  // A report every minute, stale after three: the cadence these tests'
  // arithmetic and the golden file are written in. (The agent publishes on
  // change with heartbeats; the rules read whatever reports they get.)
  roster.params.heartbeat_interval_ms = 60'000;
  roster.params.stale_after_ms = 180'000;
  roster.routes.push_back(Route{"all", "Every server"});
  for (const std::string& country : countries) {
    roster.routes.push_back(Route{lower(country), "Servers in " + country});
  }
  for (std::size_t c = 0; c < countries.size(); ++c) {
    for (std::uint32_t n = 1; n <= per_country[c]; ++n) {
      ServerEntry server;
      server.id = lower(countries[c]) + "-" + std::to_string(n);
      server.country = countries[c];
      server.probe = Endpoint{server.id + ".example.net", 443};
      server.sni = server.id + ".example.net";
      server.gossip = Endpoint{server.id + ".example.net", 7946};
      server.key[0] = static_cast<std::uint8_t>(roster.servers.size());
      server.key[1] = static_cast<std::uint8_t>(roster.servers.size() >> 8);
      server.routes = {"all", lower(countries[c])};
      roster.servers.push_back(std::move(server));
    }
  }
  return roster;
}

void add_route(Roster& roster, const std::string& id, const std::vector<std::uint32_t>& servers) {
  roster.routes.push_back(Route{id, id});
  for (std::uint32_t i : servers) roster.servers[i].routes.push_back(id);
}

ProbeResult probe(std::uint32_t target, std::uint32_t fail_streak, UnixMs at_ms) {
  ProbeResult result;
  result.target = target;
  result.last_probe_ms = at_ms;
  if (fail_streak > 0) {
    result.fail_streak = fail_streak;
    result.reason = ProbeFailure::tcp_timeout;
    result.last_ok_ms = 0;
  } else {
    result.ok_streak = 5;
    result.last_ok_ms = at_ms;
  }
  return result;
}

ObservedReport report(std::uint32_t origin, UnixMs at_ms, std::uint64_t roster_version,
                      std::vector<ProbeResult> results) {
  std::sort(results.begin(), results.end(),
            [](const ProbeResult& a, const ProbeResult& b) { return a.target < b.target; });
  ObservedReport observed;
  observed.origin = origin;
  observed.timestamp_ms = at_ms;
  observed.report.metrics.cpu_permille = 100 + origin;
  observed.report.metrics.uptime_s = 3600;
  observed.report.view.roster_version = roster_version;
  observed.report.view.results = std::move(results);
  return observed;
}

ObservedReport report_probing(std::uint32_t origin, UnixMs at_ms, std::uint64_t roster_version,
                              const std::vector<std::uint32_t>& targets,
                              const std::function<std::uint32_t(std::uint32_t)>& fail_streak_of) {
  std::vector<ProbeResult> results;
  for (std::uint32_t t : targets) {
    if (t != origin) results.push_back(probe(t, fail_streak_of(t), at_ms));
  }
  return report(origin, at_ms, roster_version, std::move(results));
}

ProbeSim::ProbeSim(Roster roster)
    : powered(roster.servers.size(), true),
      listener_ok(roster.servers.size(), true),
      roster_(std::move(roster)),
      fleet_(build_fleet(roster_)),
      views_(roster_.servers.size()) {}

const WitnessPlan& ProbeSim::plan(std::uint64_t epoch) {
  auto it = plans_.find(epoch);
  if (it == plans_.end()) it = plans_.emplace(epoch, plan_witnesses(roster_, fleet_, epoch)).first;
  return it->second;
}

void ProbeSim::probe_round(UnixMs now_ms) {
  const Parameters& params = roster_.params;
  std::uint64_t epoch = epoch_of(now_ms, params, fleet_.server_count);
  const WitnessPlan& current = plan(epoch);
  const WitnessPlan& next = plan(epoch + 1);
  for (std::uint32_t o = 0; o < fleet_.server_count; ++o) {
    if (!powered[o]) continue;
    std::map<std::uint32_t, Streak> kept;  // targets no longer probed are dropped
    std::vector<std::uint32_t> targets =
        warm_up ? probe_targets(current, next, o, now_ms, params) : current.targets(o);
    for (std::uint32_t t : targets) {
      Streak streak = views_[o].count(t) ? views_[o][t] : Streak{};
      bool ok = powered[t] && reachable(o, t);
      streak.fail = ok ? 0 : streak.fail + 1;
      streak.ok = ok ? streak.ok + 1 : 0;
      streak.last_probe_ms = now_ms;
      if (ok) streak.last_ok_ms = now_ms;
      kept[t] = streak;
    }
    views_[o] = std::move(kept);
  }
}

ObservedReport ProbeSim::make_report(std::uint32_t origin, UnixMs now_ms) const {
  std::vector<ProbeResult> results;
  for (const auto& [target, streak] : views_[origin]) {
    ProbeResult result;
    result.target = target;
    result.fail_streak = streak.fail;
    result.ok_streak = streak.ok;
    result.last_probe_ms = streak.last_probe_ms;
    result.last_ok_ms = streak.last_ok_ms;
    result.reason = streak.fail > 0 ? ProbeFailure::tls_timeout : ProbeFailure::none;
    results.push_back(result);
  }
  ObservedReport observed = report(origin, now_ms, roster_.version, std::move(results));
  observed.report.self_check.listener_ok = listener_ok[origin];
  if (!listener_ok[origin]) observed.report.self_check.reason = "listener :443 refused";
  return observed;
}

void ProbeSim::run_until(UnixMs until_ms, Evaluator& evaluator) {
  const Parameters& params = roster_.params;
  while (now_ms_ + params.probe_interval_ms <= until_ms) {
    now_ms_ += params.probe_interval_ms;
    probe_round(now_ms_);
    if ((now_ms_ - kT0) % params.heartbeat_interval_ms != 0) continue;
    for (std::uint32_t o = 0; o < fleet_.server_count; ++o) {
      if (!powered[o]) continue;
      published_.push_back(make_report(o, now_ms_));
      evaluator.upsert(published_.back());
    }
  }
}

}  // namespace mesh::verdict::testing

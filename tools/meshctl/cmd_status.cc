// meshctl status --data DIR: the verdicts the node's daemon computed, as it
// last stored them (docs/STORAGE.md, "Agent state": agent/verdicts), with
// each server's country from the stored roster. meshctl computes nothing:
// what it prints is what the daemon decided, and when.
#include <cstdio>
#include <ctime>
#include <map>

#include <nlohmann/json.hpp>

#include "node/agent/state_codec.h"
#include "storage/store.h"
#include "storage/txn.h"
#include "tools/meshctl/commands.h"
#include "tools/meshctl/exit_codes.h"
#include "tools/meshctl/inspect.h"

namespace mesh::ctl {
namespace {

std::string utc(std::int64_t ms) {
  const std::time_t seconds = static_cast<std::time_t>(ms / 1000);
  std::tm tm{};
  gmtime_r(&seconds, &tm);
  char buffer[64];
  std::strftime(buffer, sizeof buffer, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buffer;
}

std::string witnesses(const nlohmann::json& server) {
  std::string out;
  for (const auto& row : server.at("by_country")) {
    if (row.at("failing").get<std::uint32_t>() == 0) continue;
    out += (out.empty() ? "" : " ") + row.at("country").get<std::string>() + " " +
           std::to_string(row.at("failing").get<std::uint32_t>()) + "/" +
           std::to_string(row.at("eligible").get<std::uint32_t>());
  }
  return out.empty() ? "-" : out;
}

std::string joined(const nlohmann::json& ids) {
  std::string out;
  for (const auto& id : ids) out += (out.empty() ? "" : ", ") + id.get<std::string>();
  return out.empty() ? "(none)" : out;
}

void print_table(const nlohmann::json& verdicts, const std::map<std::string, std::string>& country_of) {
  std::printf("verdicts of roster version %llu, as the daemon stored them at %s\n",
              static_cast<unsigned long long>(verdicts.at("roster_version").get<std::uint64_t>()),
              utc(verdicts.at("now_ms").get<std::int64_t>()).c_str());
  std::printf("%-16s %-7s %-12s %-20s %s\n", "SERVER", "COUNTRY", "STATUS", "FAILING BY COUNTRY",
              "CAPTION");
  for (const auto& server : verdicts.at("servers")) {
    const std::string id = server.at("id").get<std::string>();
    auto country = country_of.find(id);
    std::printf("%-16s %-7s %-12s %-20s %s\n", id.c_str(),
                country == country_of.end() ? "?" : country->second.c_str(),
                server.at("status").get<std::string>().c_str(), witnesses(server).c_str(),
                server.at("caption").get<std::string>().c_str());
  }
  std::printf("%-16s %-9s %s\n", "ROUTE", "DEGRADED", "IN ROTATION");
  for (const auto& route : verdicts.at("routes")) {
    std::printf("%-16s %-9s %s\n", route.at("id").get<std::string>().c_str(),
                route.at("degraded").get<bool>() ? "yes" : "no", joined(route.at("members")).c_str());
  }
  if (!verdicts.at("unreliable_observers").empty()) {
    std::printf("unreliable observers (votes discarded): %s\n",
                joined(verdicts.at("unreliable_observers")).c_str());
  }
}

}  // namespace

int run_status(const StatusOptions& options) {
  std::string error;
  auto snapshot = open_store_snapshot(options.data_dir, error);
  if (!snapshot) {
    std::fprintf(stderr, "meshctl: %s\n", error.c_str());
    return kExitUsage;
  }
  const ReadTxn& txn = *snapshot->txn;
  auto stored = txn.get_state(agent::kVerdictsKey);
  if (!stored) {
    std::fprintf(stderr, "meshctl: %s\n", stored.message().c_str());
    return kExitUsage;
  }
  if (!stored->has_value()) {
    std::fprintf(stderr, "meshctl: the store in '%s' holds no verdicts yet (the daemon has not "
                         "evaluated any: no roster, or it has not run)\n", options.data_dir.c_str());
    return kExitCheckFailed;
  }
  const Bytes& bytes = **stored;
  auto verdicts = nlohmann::json::parse(bytes.begin(), bytes.end(), nullptr, false);
  if (verdicts.is_discarded() || !verdicts.is_object() || !verdicts.contains("servers")) {
    std::fprintf(stderr, "meshctl: the stored verdicts in '%s' are not a verdict snapshot\n",
                 options.data_dir.c_str());
    return kExitUsage;
  }
  if (options.json) {
    std::printf("%s\n", verdicts.dump(1).c_str());
    return kExitOk;
  }
  std::map<std::string, std::string> country_of;
  if (auto raw = txn.get_roster(); raw && raw->has_value()) {
    bool signature_failed = false;
    if (auto roster = open_signed_roster(**raw, "", error, signature_failed)) {
      for (const ServerEntry& server : roster->roster.servers) country_of[server.id] = server.country;
    }
  }
  try {
    print_table(verdicts, country_of);
  } catch (const nlohmann::json::exception& e) {
    std::fprintf(stderr, "meshctl: the stored verdicts are not the documented layout: %s\n", e.what());
    return kExitUsage;
  }
  return kExitOk;
}

}  // namespace mesh::ctl

// meshctl mesh --data DIR: what a node's store says about the node itself:
// its identity, roster, records, boot counter and today's volume account
// (docs/STORAGE.md, "Agent state"), read-only.
#include <algorithm>
#include <cstdio>

#include <nlohmann/json.hpp>

#include "node/agent/state_codec.h"
#include "storage/store.h"
#include "storage/txn.h"
#include "tools/meshctl/commands.h"
#include "tools/meshctl/exit_codes.h"
#include "tools/meshctl/inspect.h"

namespace mesh::ctl {
namespace {

std::uint64_t big_endian(ByteView bytes) {
  std::uint64_t value = 0;
  for (std::uint8_t b : bytes) value = value << 8 | b;
  return value;
}

}  // namespace

int run_mesh(const MeshOptions& options) {
  std::string error;
  auto snapshot = open_store_snapshot(options.data_dir, error);
  if (!snapshot) {
    std::fprintf(stderr, "meshctl: %s\n", error.c_str());
    return kExitUsage;
  }
  const ReadTxn& txn = *snapshot->txn;
  nlohmann::json out;
  std::string node = "?";
  if (auto identity = txn.get_state(kNodeIdentityKey); identity && identity->has_value()) {
    const Bytes& bytes = **identity;
    node.assign(bytes.begin(), std::find(bytes.begin(), bytes.end(), std::uint8_t{0}));
  }
  out["node"] = node;
  std::uint64_t cap = Parameters{}.volume_bytes_per_day_max;
  out["roster_version"] = nullptr;
  if (auto raw = txn.get_roster(); raw && raw->has_value()) {
    bool signature_failed = false;
    if (auto roster = open_signed_roster(**raw, "", error, signature_failed)) {
      out["roster_version"] = roster->roster.version;
      out["servers"] = roster->roster.servers.size();
      cap = roster->roster.params.volume_bytes_per_day_max;
    }
  }
  std::size_t records = 0;
  (void)txn.for_each_record([&](std::uint8_t, std::string_view, ByteView) { ++records; });
  out["reports"] = records;
  if (auto boot = txn.find_state(kBootCounterKey); boot && boot->has_value()) {
    out["boot_counter"] = big_endian(**boot);
  }
  nlohmann::json volume = {{"cap", cap}};
  if (auto stored = txn.get_state(agent::kVolumeKey); stored && stored->has_value()) {
    if (auto record = agent::decode_volume(**stored)) {
      volume["day"] = record->day;
      volume["used_today"] = record->charged_bytes;
      volume["probe_bytes"] = record->probe_bytes;
      volume["sent_bytes"] = record->sent_bytes;
      volume["received_bytes"] = record->received_bytes;
    }
  }
  out["volume"] = volume;
  if (options.json) {
    std::printf("%s\n", out.dump(1).c_str());
    return kExitOk;
  }
  std::printf("node %s, roster version %s, %zu reports held, boot %s\n", node.c_str(),
              out["roster_version"].dump().c_str(), records,
              out.contains("boot_counter") ? out["boot_counter"].dump().c_str() : "?");
  if (volume.contains("used_today")) {
    std::printf("volume today (UTC day %llu): %llu of %llu bytes (probes %llu, gossip sent %llu; "
                "received %llu, charged to the senders); stored as a reservation that runs ahead\n",
                static_cast<unsigned long long>(volume["day"].get<std::uint64_t>()),
                static_cast<unsigned long long>(volume["used_today"].get<std::uint64_t>()),
                static_cast<unsigned long long>(cap),
                static_cast<unsigned long long>(volume["probe_bytes"].get<std::uint64_t>()),
                static_cast<unsigned long long>(volume["sent_bytes"].get<std::uint64_t>()),
                static_cast<unsigned long long>(volume["received_bytes"].get<std::uint64_t>()));
  }
  return kExitOk;
}

}  // namespace mesh::ctl

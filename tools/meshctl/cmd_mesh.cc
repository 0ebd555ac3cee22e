// meshctl mesh: the node's view of the mesh. From the API (GET /v1/mesh):
// node, roster version, digest (equal on converged nodes), records, gossip
// peers and today's volume. A store holds no digest or peers: from one,
// the node's identity, roster, records, boot counter and volume account.
#include <cstdio>

#include "tools/meshctl/commands.h"

namespace mesh::ctl {
namespace {

using Json = nlohmann::json;

unsigned long long u64(const Json& value) { return value.get<std::uint64_t>(); }

// The panel sync and the alerts (docs/PANELS.md), when the node has them;
// an older node's answer has neither field.
void print_panel(const Json& mesh, const Style& style) {
  if (mesh.contains("panel_sync") && mesh["panel_sync"].is_object()) {
    const Json& p = mesh["panel_sync"];
    const std::string owner = p["owner"].is_string() ? printable(p["owner"].get<std::string>()) : "none";
    const bool failing = p["failures_in_row"].get<std::uint32_t>() > 0;
    std::printf("%-15s %s%s, %s (owner %s), its last round %s, hosts %llu (%llu disabled, %llu not ours)\n",
                "panel sync", printable(p["kind"].get<std::string>()).c_str(),
                p["dry_run"].get<bool>() ? " dry run" : "", printable(p["right"].get<std::string>()).c_str(),
                owner.c_str(), age_text(p["last_sync_age_s"]).c_str(), u64(p["hosts"]["total"]),
                u64(p["hosts"]["disabled"]), u64(p["hosts"]["unknown"]));
    if (failing) {
      std::printf("%-15s %s\n", "",
                  paint(std::to_string(p["failures_in_row"].get<std::uint32_t>()) + " rounds failed: " +
                            printable(p["last_error"].get<std::string>()),
                        Colour::red, style)
                      .c_str());
    }
  }
  if (mesh.contains("alerts") && mesh["alerts"].is_object()) {
    const Json& a = mesh["alerts"];
    std::printf("%-15s %llu queued; webhook %llu sent, %llu failed; telegram %llu sent, %llu failed; %llu dropped\n",
                "alerts", u64(a["queued"]), u64(a["webhook"]["sent"]), u64(a["webhook"]["failed"]),
                u64(a["telegram"]["sent"]), u64(a["telegram"]["failed"]), u64(a["dropped"]));
  }
}

void print_api_mesh(const Json& mesh, const Style& style) {
  const Json& volume = mesh.at("volume");
  const bool tight = volume.at("tight").get<bool>();
  std::printf("%-15s %s\n", "node", printable(mesh.at("node").get<std::string>()).c_str());
  std::printf("%-15s %s\n", "roster version", mesh.at("roster_version").dump().c_str());
  std::printf("%-15s %s\n", "digest", printable(mesh.at("digest").get<std::string>()).c_str());
  std::printf("%-15s %llu\n", "records", u64(mesh.at("records")));
  std::printf("%-15s %llu of %llu bytes%s\n", "volume today", u64(volume.at("used_today")),
              u64(volume.at("cap")), tight ? paint(" (tight: probes slowed)", Colour::yellow, style).c_str() : "");
  print_panel(mesh, style);
  std::printf("\n");
  Table table({"PEER", "CONNECTED", "LAST FRAME"});
  for (const Json& peer : mesh.at("peers")) {
    const bool connected = peer.at("connected").get<bool>();
    table.add_row({{peer.at("id").get<std::string>()},
                   {connected ? "yes" : "no", connected ? Colour::green : Colour::red},
                   {age_text(peer.at("last_frame_age_s"))}});
  }
  table.print(style);
}

void print_store_mesh(const Json& mesh) {
  const Json& volume = mesh.at("volume");
  std::printf("node %s, roster version %s, %llu reports held, boot %s\n",
              printable(mesh.at("node").get<std::string>()).c_str(), mesh.at("roster_version").dump().c_str(),
              u64(mesh.at("reports")), mesh.contains("boot_counter") ? mesh["boot_counter"].dump().c_str() : "?");
  if (!volume.contains("used_today")) return;
  std::printf("volume today (UTC day %llu): %llu of %llu bytes (probes %llu, gossip sent %llu; "
              "received %llu, charged to the senders); stored as a reservation that runs ahead\n",
              u64(volume.at("day")), u64(volume.at("used_today")), u64(volume.at("cap")),
              u64(volume.at("probe_bytes")), u64(volume.at("sent_bytes")), u64(volume.at("received_bytes")));
}

}  // namespace

int run_mesh(const ReadOptions& options) {
  return run_read_command(
      "mesh", options, [](NodeSource& source) { return source.mesh(); },
      [](const Json& mesh, const NodeSource& source, const Style& style) {
        if (source.from_api()) {
          print_api_mesh(mesh, style);
        } else {
          print_store_mesh(mesh);
        }
      });
}

}  // namespace mesh::ctl

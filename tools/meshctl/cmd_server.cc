// meshctl server ID: one server in detail: status, caption, witnesses,
// metrics and self-check from its latest report, and each observer's
// latest streak, reason and stage ladder. From the API: GET
// /v1/servers/{id}. From a store: the same built from the stored verdicts
// and reports (tools/meshctl/store_source.h).
#include <cstdio>

#include "tools/meshctl/commands.h"

namespace mesh::ctl {
namespace {

using Json = nlohmann::json;

std::string joined(const Json& values, const char* separator) {
  std::string out;
  for (const Json& value : values) out += (out.empty() ? "" : separator) + value.get<std::string>();
  return out.empty() ? "-" : out;
}

// `value` / 10^decimals with `decimals` digits after the point: (230, 1) is "23.0".
std::string scaled(std::uint64_t value, std::size_t decimals) {
  std::string digits = std::to_string(value);
  if (digits.size() <= decimals) digits.insert(0, decimals + 1 - digits.size(), '0');
  digits.insert(digits.size() - decimals, ".");
  return digits;
}

std::string witnesses_text(const Json& witnesses) {
  std::string out = std::to_string(witnesses.at("failing").get<std::uint32_t>()) + " of " +
                    std::to_string(witnesses.at("eligible").get<std::uint32_t>()) + " failing";
  std::string countries;
  for (const auto& [country, row] : witnesses.at("by_country").items()) {
    countries += (countries.empty() ? "" : ", ") + country + " " +
                 std::to_string(row.at("failing").get<std::uint32_t>()) + "/" +
                 std::to_string(row.at("eligible").get<std::uint32_t>());
  }
  return countries.empty() ? out : out + " (" + countries + ")";
}

std::string self_check_text(const Json& check, const Style& style) {
  if (check.is_null()) return "no report";
  auto flag = [&](const char* key) {
    return check.at(key).get<bool>() ? std::string("ok") : paint("FAILED", Colour::red, style);
  };
  const auto reason = printable(check.at("reason").get<std::string>());
  return "listener " + flag("listener_ok") + ", service " + flag("service_ok") +
         (reason.empty() ? "" : ": " + reason);
}

std::string metrics_text(const Json& m) {
  if (m.is_null()) return "no report";
  auto n = [&](const char* key) { return m.at(key).get<std::uint64_t>(); };
  const std::uint64_t up = n("uptime_s");
  return "cpu " + scaled(n("cpu_permille"), 1) + "%, load " + scaled(n("load_average_milli"), 3) +
         ", memory " + std::to_string(n("memory_used_kib") / 1024) + "/" +
         std::to_string(n("memory_total_kib") / 1024) + " MiB, disk " + std::to_string(n("disk_used_mib")) +
         "/" + std::to_string(n("disk_total_mib")) + " MiB, net rx " + std::to_string(n("net_rx_bytes_per_s")) +
         " tx " + std::to_string(n("net_tx_bytes_per_s")) + " B/s, up " + std::to_string(up / 86400) + "d " +
         std::to_string(up % 86400 / 3600) + "h " + std::to_string(up % 3600 / 60) + "m, " +
         std::to_string(n("listener_connections")) + " connections";
}

void print_line(const char* label, const std::string& text) {
  std::printf("%-11s %s\n", label, text.c_str());
}

void print_observers(const Json& observers, const Style& style) {
  Table table({"OBSERVER", "COUNTRY", "STREAK", "LAST REASON", "TCP", "TLS", "LAST PROBE", "VOTE"});
  for (const Json& o : observers) {
    const auto failing = o.at("streak").at("failing").get<std::uint32_t>();
    const auto ok = o.at("streak").at("ok").get<std::uint32_t>();
    table.add_row({{o.at("id").get<std::string>()},
                   {o.at("country").get<std::string>()},
                   failing > 0 ? Cell{"failing " + std::to_string(failing), Colour::yellow}
                   : o.value("recovered", false)
                       ? Cell{"ok " + std::to_string(ok) + " (recovered)", Colour::none}
                       : Cell{"ok " + std::to_string(ok), Colour::none},
                   {o.at("last_reason").get<std::string>()},
                   {o.at("stages").at("tcp").get<std::string>()},
                   {o.at("stages").at("tls").get<std::string>()},
                   {age_text(o.at("last_probe_age_s"))},
                   {o.at("unreliable").get<bool>() ? "discarded (unreliable)" : "counted"}});
  }
  table.print(style);
}

void print_server(const Json& s, const NodeSource&, const Style& style) {
  const auto status = s.at("status").get<std::string>();
  const auto caption = printable(s.at("caption").get<std::string>());
  print_line("server", printable(s.at("id").get<std::string>()) + " (" +
                           printable(s.at("country").get<std::string>()) + "), routes " +
                           printable(joined(s.at("routes"), ", ")));
  print_line("status", paint(status, status_colour(status), style) + (caption.empty() ? "" : ": " + caption));
  print_line("flags", joined(s.at("flags"), ", "));
  print_line("witnesses", witnesses_text(s.at("witnesses")));
  print_line("report", age_text(s.at("last_report_age_s")) +
                           (s.at("metrics_stale").get<bool>() ? " (metrics stale)" : ""));
  print_line("self-check", self_check_text(s.at("self_check"), style));
  print_line("metrics", metrics_text(s.at("metrics")));
  std::printf("\n");
  if (s.at("observers").empty()) {
    std::printf("no observer has reported on this server\n");
    return;
  }
  print_observers(s.at("observers"), style);
}

}  // namespace

int run_server(const ServerOptions& options) {
  return run_read_command(
      "server", options.read, [&](NodeSource& source) { return source.server(options.id); }, print_server);
}

}  // namespace mesh::ctl

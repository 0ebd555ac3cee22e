// meshctl status: every server's status as a table, in the spirit of `serf
// members`: server, country, status, failing witnesses by country, caption.
// From the API: GET /v1/servers with the filters as its query. From a
// store: the daemon's stored verdicts (tools/meshctl/store_source.h),
// filtered the same way.
#include <algorithm>
#include <cctype>
#include <cstdio>

#include "tools/meshctl/commands.h"

namespace mesh::ctl {
namespace {

using Json = nlohmann::json;

// "RU 3/3 NL 1/2": the countries with failing witnesses; "-" with none.
std::string failing_by_country(const Json& server) {
  std::string out;
  for (const auto& [country, row] : server.at("witnesses").at("by_country").items()) {
    const auto failing = row.at("failing").get<std::uint32_t>();
    if (failing == 0) continue;
    out += (out.empty() ? "" : " ") + country + " " + std::to_string(failing) + "/" +
           std::to_string(row.at("eligible").get<std::uint32_t>());
  }
  return out.empty() ? "-" : out;
}

void print_servers(const Json& servers, const NodeSource&, const Style& style) {
  Table table({"SERVER", "COUNTRY", "STATUS", "FAILING WITNESSES", "CAPTION"});
  for (const Json& server : servers) {
    const auto status = server.at("status").get<std::string>();
    table.add_row({{server.at("id").get<std::string>()},
                   {server.at("country").get<std::string>()},
                   {status, status_colour(status)},
                   {failing_by_country(server)},
                   {server.at("caption").get<std::string>()}});
  }
  table.print(style);
}

}  // namespace

int run_status(const StatusOptions& options) {
  ServerFilter filter = options.filter;
  const auto& s = filter.status;
  if (!s.empty() && s != "ok" && s != "unavailable" && s != "unreachable" && s != "no_data") {
    std::fprintf(stderr, "meshctl status: --status must be ok, unavailable, unreachable or no_data\n");
    return kExitUsage;
  }
  // Country codes are upper case in the roster; accept "de" for "DE".
  std::transform(filter.country.begin(), filter.country.end(), filter.country.begin(),
                 [](unsigned char c) { return static_cast<char>(std::toupper(c)); });
  return run_read_command(
      "status", options.read, [&](NodeSource& source) { return source.servers(filter); }, print_servers);
}

}  // namespace mesh::ctl

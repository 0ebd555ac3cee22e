// meshctl routes: each route, degraded or not, and the servers in rotation
// in roster order (what a panel builds subscriptions from). From the API:
// GET /v1/routes. From a store: the routes of the daemon's stored verdicts,
// named from the stored roster. With --country, the rotation for users in
// that country (docs/VERDICTS.md, "Rotation per user country").
#include "tools/meshctl/commands.h"

namespace mesh::ctl {
namespace {

using Json = nlohmann::json;

std::string joined(const Json& ids) {
  std::string out;
  for (const Json& id : ids) out += (out.empty() ? "" : ", ") + id.get<std::string>();
  return out.empty() ? "(none)" : out;
}

void print_routes(const Json& routes, const NodeSource&, const Style& style) {
  Table table({"ROUTE", "NAME", "DEGRADED", "IN ROTATION", "REASON"});
  for (const Json& route : routes) {
    const bool degraded = route.at("degraded").get<bool>();
    table.add_row({{route.at("id").get<std::string>()},
                   {route.at("name").get<std::string>()},
                   {degraded ? "yes" : "no", degraded ? Colour::red : Colour::green},
                   {joined(route.at("servers"))},
                   {route.at("reason").get<std::string>()}});
  }
  table.print(style);
}

}  // namespace

int run_routes(const RoutesOptions& options) {
  return run_read_command(
      "routes", options.read, [&](NodeSource& source) { return source.routes(options.country); },
      print_routes);
}

}  // namespace mesh::ctl

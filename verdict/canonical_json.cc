// Canonical JSON of an Evaluation (docs/VERDICTS.md, "Output"). nlohmann's
// json object keeps keys in a std::map, so they come out sorted; every
// number is an integer, so formatting is stable across platforms.
#include <charconv>
#include <nlohmann/json.hpp>

#include "verdict/evaluation.h"
#include "verdict/hash.h"

namespace mesh::verdict {
namespace {

using Json = nlohmann::json;

Json flags_json(const StatusFlags& flags) {
  Json list = Json::array();
  for (std::string_view name : flag_names(flags)) list.push_back(name);
  return list;
}

Json server_json(const ServerVerdict& server) {
  Json countries = Json::array();
  for (const CountryTally& row : server.by_country) {
    countries.push_back({{"country", row.country},
                         {"failing", row.failing},
                         {"eligible", row.eligible},
                         {"missing", row.missing}});
  }
  return {{"id", server.id},
          {"status", to_string(server.status)},
          {"flags", flags_json(server.flags)},
          {"caption", server.caption},
          {"failing", server.failing},
          {"eligible", server.eligible},
          {"quorum", server.quorum},
          {"missing", server.missing},
          {"discarded", server.discarded},
          {"explained", server.explained},
          {"by_country", std::move(countries)},
          {"self_check_reason", server.self_check_reason},
          {"last_report_ms", server.last_report_ms},
          {"badges", server.badges}};
}

Json route_json(const RouteMembership& route) {
  return {{"id", route.route_id},
          {"members", route.members},
          {"degraded", route.degraded},
          {"degraded_reason", route.degraded_reason}};
}

}  // namespace

std::vector<std::string_view> flag_names(const StatusFlags& flags) {
  std::vector<std::string_view> names;
  if (flags.unavailable) names.push_back("unavailable");
  if (flags.unreachable) names.push_back("unreachable");
  if (flags.no_data) names.push_back("no_data");
  if (flags.insufficient_evidence) names.push_back("insufficient_evidence");
  if (flags.held_out) names.push_back("held_out");
  return names;
}

const char* to_string(ServerStatus status) {
  switch (status) {
    case ServerStatus::ok: return "ok";
    case ServerStatus::no_data: return "no_data";
    case ServerStatus::unreachable: return "unreachable";
    case ServerStatus::unavailable: return "unavailable";
  }
  return "unknown";
}

namespace {

// "<head>N of M servers can't see it)", built in one allocation: an
// evaluation writes one per server with failing witnesses.
std::string n_of_m_caption(std::string_view head, std::uint32_t failing, std::uint32_t eligible) {
  constexpr std::string_view kOf = " of ";
  constexpr std::string_view kTail = " servers can't see it)";
  char n[16];
  char m[16];
  const auto n_end = std::to_chars(n, n + sizeof n, failing).ptr;
  const auto m_end = std::to_chars(m, m + sizeof m, eligible).ptr;
  std::string caption;
  caption.reserve(head.size() + (n_end - n) + kOf.size() + (m_end - m) + kTail.size());
  caption.append(head).append(n, n_end).append(kOf).append(m, m_end).append(kTail);
  return caption;
}

}  // namespace

std::string unreachable_caption(std::uint32_t failing, std::uint32_t eligible) {
  return n_of_m_caption("Unreachable from your servers (", failing, eligible);
}

std::string insufficient_caption(std::uint32_t failing, std::uint32_t eligible) {
  return n_of_m_caption("Not enough evidence (", failing, eligible);
}

std::string held_out_caption(std::uint32_t changes) {
  return "Held out: flapping (" + std::to_string(changes) + " changes in the last hour)";
}

std::string to_canonical_json(const Evaluation& evaluation, int indent) {
  Json servers = Json::array();
  for (const ServerVerdict& server : evaluation.servers) servers.push_back(server_json(server));
  Json routes = Json::array();
  for (const RouteMembership& route : evaluation.routes) routes.push_back(route_json(route));
  Json root = {{"roster_version", evaluation.roster_version},
               {"now_ms", evaluation.now_ms},
               {"epoch", evaluation.epoch},
               {"grace", evaluation.grace},
               {"partitioned", evaluation.partitioned},
               {"servers", std::move(servers)},
               {"unreliable_observers", evaluation.unreliable_observers},
               {"routes", std::move(routes)},
               {"reports_ignored", evaluation.reports_ignored}};
  // A self-check reason is the reporter's free text: invalid UTF-8 is
  // replaced (U+FFFD) rather than thrown on.
  return root.dump(indent, ' ', false, Json::error_handler_t::replace);
}

std::string evaluation_digest(const Evaluation& evaluation) {
  std::uint64_t digest = fnv1a64(to_canonical_json(evaluation));
  static constexpr char kHex[] = "0123456789abcdef";
  std::string hex(16, '0');
  for (int i = 15; i >= 0; --i) {
    hex[static_cast<std::size_t>(i)] = kHex[digest & 0xf];
    digest >>= 4;
  }
  return hex;
}

}  // namespace mesh::verdict

#include "tools/meshctl/verdict_decode.h"

#include <stdexcept>

#include <nlohmann/json.hpp>

namespace mesh::ctl {
namespace {

using Json = nlohmann::json;

// nlohmann's checked accessors throw on a missing key or a wrong type; the
// exceptions stay inside this file (decode_stored_verdicts catches them).
verdict::ServerStatus status_of(const std::string& text) {
  for (auto status : {verdict::ServerStatus::ok, verdict::ServerStatus::no_data,
                      verdict::ServerStatus::unreachable, verdict::ServerStatus::unavailable}) {
    if (text == verdict::to_string(status)) return status;
  }
  throw std::invalid_argument("unknown status '" + text + "'");
}

verdict::ServerVerdict server_of(const Json& j) {
  verdict::ServerVerdict server;
  server.id = j.at("id").get<std::string>();
  server.status = status_of(j.at("status").get<std::string>());
  for (const Json& flag : j.at("flags")) {
    const auto name = flag.get<std::string>();
    server.flags.unavailable |= name == "unavailable";
    server.flags.unreachable |= name == "unreachable";
    server.flags.no_data |= name == "no_data";
    server.flags.insufficient_evidence |= name == "insufficient_evidence";
  }
  server.caption = j.at("caption").get<std::string>();
  server.failing = j.at("failing").get<std::uint32_t>();
  server.eligible = j.at("eligible").get<std::uint32_t>();
  server.quorum = j.at("quorum").get<std::uint32_t>();
  server.missing = j.at("missing").get<std::uint32_t>();
  server.discarded = j.at("discarded").get<std::uint32_t>();
  server.explained = j.value("explained", std::uint32_t{0});  // absent before 2026-12
  for (const Json& row : j.at("by_country")) {
    server.by_country.push_back({row.at("country").get<std::string>(), row.at("failing").get<std::uint32_t>(),
                                 row.at("eligible").get<std::uint32_t>(), row.at("missing").get<std::uint32_t>()});
  }
  server.self_check_reason = j.at("self_check_reason").get<std::string>();
  server.last_report_ms = j.at("last_report_ms").get<UnixMs>();
  server.badges = j.at("badges").get<std::vector<std::string>>();
  return server;
}

verdict::Evaluation evaluation_of(const Json& j) {
  verdict::Evaluation evaluation;
  evaluation.roster_version = j.at("roster_version").get<std::uint64_t>();
  evaluation.now_ms = j.at("now_ms").get<UnixMs>();
  evaluation.epoch = j.at("epoch").get<std::uint64_t>();
  evaluation.grace = j.at("grace").get<bool>();
  for (const Json& server : j.at("servers")) evaluation.servers.push_back(server_of(server));
  evaluation.unreliable_observers = j.at("unreliable_observers").get<std::vector<std::string>>();
  for (const Json& route : j.at("routes")) {
    evaluation.routes.push_back({route.at("id").get<std::string>(),
                                 route.at("members").get<std::vector<std::string>>(),
                                 route.at("degraded").get<bool>(),
                                 route.at("degraded_reason").get<std::string>()});
  }
  evaluation.reports_ignored = j.at("reports_ignored").get<std::uint32_t>();
  evaluation.partitioned = j.value("partitioned", false);  // absent before 2026-12
  return evaluation;
}

}  // namespace

CtlResult<verdict::Evaluation> decode_stored_verdicts(ByteView bytes) {
  auto json = Json::parse(bytes.begin(), bytes.end(), nullptr, false);
  if (json.is_discarded() || !json.is_object()) return unusable("not JSON");
  try {
    return evaluation_of(json);
  } catch (const std::exception& e) {
    return unusable(e.what());
  }
}

}  // namespace mesh::ctl

// A snapshot by hand for the API's pure tests: four servers in two
// countries on two routes, one of them unreachable from DE, one without
// data; and a token set with one read and one admin token.
#pragma once

#include <memory>

#include "node/api/snapshot.h"
#include "node/api/tokens.h"
#include "verdict/evaluation.h"

namespace mesh::api::testing {

inline constexpr const char* kReadToken = "read-token-0123456789abcdef";
inline constexpr const char* kAdminToken = "admin-token-0123456789abcdef";

inline TokenSet tokens() {
  auto set = TokenSet::parse("# test tokens\nread " + token_hash_hex(kReadToken) + "\nadmin " +
                                 token_hash_hex(kAdminToken) + "\n",
                             "test tokens");
  return std::move(set.value());
}

inline std::shared_ptr<ApiSnapshot> snapshot(std::uint64_t index = 7) {
  auto roster = std::make_shared<Roster>();
  roster->version = 3;
  roster->routes = {Route{"eu", "Europe"}, Route{"nl", "Netherlands"}};
  const char* ids[] = {"de-1", "de-2", "nl-1", "nl-2"};
  const char* countries[] = {"DE", "DE", "NL", "NL"};
  for (int i = 0; i < 4; ++i) {
    ServerEntry server;
    server.id = ids[i];
    server.country = countries[i];
    server.routes = i < 2 ? std::vector<std::string>{"eu"} : std::vector<std::string>{"eu", "nl"};
    roster->servers.push_back(server);
  }
  auto evaluation = std::make_shared<verdict::Evaluation>();
  evaluation->roster_version = 3;
  for (int i = 0; i < 4; ++i) {
    verdict::ServerVerdict v;
    v.id = ids[i];
    v.eligible = 2;
    v.by_country = {{"DE", 0, 1, 0}, {"NL", 0, 1, 0}};
    evaluation->servers.push_back(v);
  }
  auto& blocked = evaluation->servers[2];  // nl-1: DE cannot reach it
  blocked.status = verdict::ServerStatus::unreachable;
  blocked.flags.unreachable = true;
  blocked.failing = 2;
  blocked.eligible = 3;
  blocked.caption = verdict::unreachable_caption(2, 3);
  blocked.by_country = {{"DE", 2, 2, 0}, {"NL", 0, 1, 0}};
  auto& silent = evaluation->servers[3];  // nl-2: no reports
  silent.status = verdict::ServerStatus::no_data;
  silent.flags.no_data = true;
  silent.caption = std::string(verdict::kCaptionNoData);
  silent.badges = {std::string(verdict::kBadgeStale), std::string(verdict::kBadgeAgentSilent)};
  evaluation->routes = {{"eu", {"de-1", "de-2", "nl-2"}, false, ""}, {"nl", {"nl-2"}, false, ""}};
  auto out = std::make_shared<ApiSnapshot>();
  out->node = "de-1";
  out->version = "0.1.0";
  out->taken_ms = 1'700'000'100'000;
  out->index = index;
  out->roster = roster;
  out->evaluation = evaluation;
  out->servers.resize(4);
  for (int i = 0; i < 4; ++i) {
    out->servers[i].entry = &roster->servers[i];
    out->servers[i].verdict = &evaluation->servers[i];
    if (i != 3) {
      out->servers[i].last_report_ms = out->taken_ms - 12'000;
      out->servers[i].metrics = Metrics{230, 1, 2, 3, 4, 5, 6, 7, 8, 9};
      out->servers[i].self_check = SelfCheck{};
    }
  }
  out->servers[2].observers = {
      {"de-1", "DE", 4, 0, ProbeFailure::tcp_timeout, out->taken_ms - 3'000, false},
      {"de-2", "DE", 5, 0, ProbeFailure::tls_reset, out->taken_ms - 4'000, false},
      {"nl-2", "NL", 0, 2, ProbeFailure::none, out->taken_ms - 40'000, true, true}};
  out->digest_hex = std::string(64, 'a');
  out->records = 4;
  out->held = {{RecordKind::roster, "operator", 3, 1'700'000'000'000, 0x5be1c0a2},
               {RecordKind::report, "de-1", 41, out->taken_ms - 1'000, 0x09f3aa71}};
  out->peers = {{"de-2", true, out->taken_ms - 2'000}, {"nl-1", false, 0}};
  out->volume_used_bytes = 1'000;
  out->volume_cap_bytes = 209'715'200;
  return out;
}

}  // namespace mesh::api::testing

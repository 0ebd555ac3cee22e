// Hand-built rosters and evaluations for the tables of node/rotation/.
#pragma once

#include <string>
#include <vector>

#include "record/roster.h"
#include "verdict/evaluation.h"

namespace mesh::test {

// A server of the table: id, country, routes.
struct TableServer {
  std::string id, country;
  std::vector<std::string> routes;
};

Roster table_roster(const std::vector<TableServer>& servers, std::uint64_t version = 7);

// An evaluation of `roster` with every server ok, reported at `now_ms`, and
// the routes computed from the statuses as the engine does (in rotation:
// ok and no_data; else the best available by self-check then N/M).
verdict::Evaluation table_evaluation(const Roster& roster, UnixMs now_ms = 1'000'000);

verdict::ServerVerdict& server(verdict::Evaluation& evaluation, const std::string& id);
// Sets C's row of `id` (failing of eligible) and the totals.
void set_row(verdict::Evaluation& evaluation, const std::string& id, const std::string& country,
             std::uint32_t failing, std::uint32_t eligible);
void set_status(verdict::Evaluation& evaluation, const std::string& id, verdict::ServerStatus status);
// Recomputes the routes from the statuses (after set_status).
void recompute_routes(const Roster& roster, verdict::Evaluation& evaluation);

}  // namespace mesh::test

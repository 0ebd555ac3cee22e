#include "node/rotation/country_routes.h"

#include <algorithm>
#include <string>

namespace mesh::rotation {
namespace {

using verdict::RouteMembership;
using verdict::ServerStatus;
using verdict::ServerVerdict;

const verdict::CountryTally* row_of(const ServerVerdict& verdict, std::string_view country) {
  for (const verdict::CountryTally& row : verdict.by_country) {
    if (row.country == country) return &row;
  }
  return nullptr;
}

// a/b < c/d for fractions of witnesses, with b = 0 counting as 0.
bool fraction_less(std::uint32_t a, std::uint32_t b, std::uint32_t c, std::uint32_t d) {
  const std::uint64_t left = b == 0 ? 0 : std::uint64_t{a} * std::max<std::uint32_t>(d, 1);
  const std::uint64_t right = d == 0 ? 0 : std::uint64_t{c} * std::max<std::uint32_t>(b, 1);
  return left < right;
}

// C's best available: a server that says it can serve before one whose
// self-check failed; then one C does not fail; then the lower share of C's
// witnesses failing it; then the lower share of all witnesses. Equal keys
// tie, and every tied server is served (docs/VERDICTS.md, "Routes").
bool rank_better(const ServerVerdict& a, const ServerVerdict& b, std::string_view country) {
  if (a.flags.unavailable != b.flags.unavailable) return !a.flags.unavailable;
  const bool a_fails = country_view(a, country) == CountryView::fails;
  const bool b_fails = country_view(b, country) == CountryView::fails;
  if (a_fails != b_fails) return !a_fails;
  const verdict::CountryTally* ra = row_of(a, country);
  const verdict::CountryTally* rb = row_of(b, country);
  const std::uint32_t af = ra ? ra->failing : 0, ae = ra ? ra->eligible : 0;
  const std::uint32_t bf = rb ? rb->failing : 0, be = rb ? rb->eligible : 0;
  if (fraction_less(af, ae, bf, be)) return true;
  if (fraction_less(bf, be, af, ae)) return false;
  return fraction_less(a.failing, a.eligible, b.failing, b.eligible);
}

RouteMembership best_available(const Route& route, const std::vector<std::uint32_t>& indices,
                               const verdict::Evaluation& evaluation, std::string_view country) {
  RouteMembership membership{route.id, {}, true, {}};
  const auto& servers = evaluation.servers;
  std::uint32_t best = indices.front();
  for (std::uint32_t i : indices) {
    if (rank_better(servers[i], servers[best], country)) best = i;
  }
  std::uint32_t unavailable = 0;
  for (std::uint32_t i : indices) {
    if (servers[i].flags.unavailable) ++unavailable;
    if (!rank_better(servers[best], servers[i], country) && !rank_better(servers[i], servers[best], country)) {
      membership.members.push_back(servers[i].id);
    }
  }
  membership.degraded_reason = "no server in rotation for users in " + std::string(country) + " (" +
                               std::to_string(unavailable) + " unavailable, " +
                               std::to_string(indices.size() - unavailable) +
                               " unreachable or held out): serving the best available";
  return membership;
}

std::vector<std::vector<std::uint32_t>> route_servers(const Roster& roster) {
  std::vector<std::vector<std::uint32_t>> out(roster.routes.size());
  for (std::uint32_t s = 0; s < roster.servers.size(); ++s) {
    for (const std::string& id : roster.servers[s].routes) {
      for (std::size_t r = 0; r < roster.routes.size(); ++r) {
        if (roster.routes[r].id == id) out[r].push_back(s);
      }
    }
  }
  return out;
}

}  // namespace

std::vector<bool> global_rotation(const Roster& roster, const verdict::Evaluation& evaluation) {
  std::vector<bool> in(roster.servers.size());
  for (std::uint32_t s = 0; s < roster.servers.size(); ++s) {
    const ServerStatus status = evaluation.servers[s].status;
    in[s] = status == ServerStatus::ok || status == ServerStatus::no_data;
  }
  const auto servers_of = route_servers(roster);
  for (std::size_t r = 0; r < roster.routes.size(); ++r) {
    const RouteMembership& membership = evaluation.routes[r];
    for (std::uint32_t s : servers_of[r]) {
      const auto& members = membership.members;
      const bool listed = std::find(members.begin(), members.end(), roster.servers[s].id) != members.end();
      if (membership.degraded || !listed) in[s] = false;
    }
  }
  return in;
}

CountryView country_view(const ServerVerdict& verdict, std::string_view country) {
  const verdict::CountryTally* row = row_of(verdict, country);
  if (row == nullptr || row->eligible == 0) return CountryView::none;
  if (row->failing == 0) return CountryView::reaches;
  if (row->failing >= 2 && row->failing == row->eligible) return CountryView::fails;
  return CountryView::split;
}

bool in_rotation_for(const ServerVerdict& verdict, bool global_in, bool partitioned, std::string_view country) {
  if (verdict.flags.unavailable) return false;
  const CountryView view = country_view(verdict, country);
  if (global_in) return partitioned || view != CountryView::fails;
  // Out of the global rotation: back in for C only when its reachability is
  // all that keeps it out and C's own witnesses reach it.
  return verdict.status == ServerStatus::unreachable && view == CountryView::reaches;
}

std::vector<RouteMembership> country_routes(const Roster& roster, const verdict::Evaluation& evaluation,
                                            std::string_view country) {
  const std::vector<bool> global = global_rotation(roster, evaluation);
  const auto servers_of = route_servers(roster);
  std::vector<RouteMembership> out;
  out.reserve(roster.routes.size());
  for (std::size_t r = 0; r < roster.routes.size(); ++r) {
    const auto& indices = servers_of[r];
    const bool seen = std::any_of(indices.begin(), indices.end(), [&](std::uint32_t s) {
      return country_view(evaluation.servers[s], country) != CountryView::none;
    });
    if (!seen) {  // C's users follow the global answer, verbatim
      out.push_back(evaluation.routes[r]);
      continue;
    }
    RouteMembership membership{roster.routes[r].id, {}, false, {}};
    for (std::uint32_t s : indices) {
      if (in_rotation_for(evaluation.servers[s], global[s], evaluation.partitioned, country)) {
        membership.members.push_back(roster.servers[s].id);
      }
    }
    out.push_back(membership.members.empty() ? best_available(roster.routes[r], indices, evaluation, country)
                                             : std::move(membership));
  }
  return out;
}

}  // namespace mesh::rotation

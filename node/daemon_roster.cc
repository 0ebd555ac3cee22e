// The daemon and its roster: the roster a start needs (a first start
// without a valid one, or with another key for this node, exits 2 naming
// both keys), the roster file offered at start and on SIGHUP (a running
// node whose new file is refused keeps the roster it holds), and the
// problems that stand meanwhile: logged every minute, in /healthz and
// /metrics (docs/API.md, "GET /healthz").
#include "node/daemon_impl.h"
#include "node/log.h"
#include "node/verdict_log.h"
#include "record/envelope.h"
#include "record/fleet_scale.h"

namespace mesh::node {

std::optional<Bytes> stored_roster(const agent::StoredState& stored) {
  for (const Bytes& raw : stored.records) {
    auto envelope = decode_envelope_view(raw);
    if (envelope && envelope->kind == RecordKind::roster) return raw;
  }
  return std::nullopt;
}

// Keys a roster signed by the wrong key may have been signed with, and
// that the node can name (node/roster_check.h); the roster's own servers'
// keys are tried too.
std::vector<NamedKey> Daemon::known_keys() const {
  return {NamedKey{"this node's key (" + config_.key_file + ")", node_key_}};
}

// The roster this node will hold once started: the roster file's when it
// is valid and newer, else the store's. None, or one that does not list
// this node with its key, stops the start (exit 2) before the store is
// written.
Status<StartError> Daemon::check_start_roster(const std::optional<Bytes>& stored) {
  const StartRoster start =
      choose_start_roster(read_roster_file(config_.roster_file), stored, config_.operator_key, known_keys());
  if (!start.held) return make_error(StartError::bad_config, start.no_roster);
  if (auto problem = check_membership(*start.held, config_.node_id, node_key_)) {
    return make_error(StartError::bad_config, "cannot start: " + problem->message);
  }
  return Ok{};
}

// The roster file, offered as the API's PUT /v1/roster is. A file that is
// refused leaves the roster held in force and stands as a problem until a
// later read (SIGHUP) finds it fixed, not newer than the roster held, or
// gone.
void Daemon::offer_roster_file() {
  constexpr const char* kProblem = "roster_file_refused";
  const std::string& path = config_.roster_file;
  const RosterFile file = read_roster_file(path);
  if (file.unreadable) return set_problem(kProblem, *file.unreadable);
  const Roster* held = agent_->roster();
  if (!file.bytes) return set_problem(kProblem, std::nullopt);  // the store's roster serves
  auto offered = agent_->offer_record(*file.bytes, wall_now());
  if (offered) {
    set_problem(kProblem, std::nullopt);
    apply(std::move(offered.value()));
    return;
  }
  if (offered.code() == RecordError::stale && held != nullptr) {
    log_event(LogLevel::info, "roster",
              "roster file '" + path + "' is not newer than the roster held (version " +
                  std::to_string(held->version) + ")");
    return set_problem(kProblem, std::nullopt);
  }
  const RosterCheck check = check_roster_record(*file.bytes, config_.operator_key, known_keys());
  // Accepted by the check but refused by the node: dated in the future, say.
  const std::string why = check.accepted() ? std::string(to_string(offered.code())) + ": " + offered.message()
                                           : check.message;
  const std::string keeps = held == nullptr ? "" : "; keeping roster version " + std::to_string(held->version) +
                                                       " (fix the file, then send SIGHUP)";
  set_problem(kProblem, "roster file '" + path + "' refused (" +
                            (check.accepted() ? to_string(offered.code()) : to_string(check.refusal)) + "): " +
                            why + keeps);
}

void Daemon::set_problem(const std::string& code, std::optional<std::string> message) {
  const bool fixed = !message;
  if (!problems_.set(code, std::move(message))) return;
  problems_changed_ = true;
  if (fixed) log_event(LogLevel::info, "problem", code + ": fixed", {{"problem", code}, {"fixed", true}});
  log_problems();
}

// A roster held (from the file, the API or gossip) that has no entry for
// this node, or another key for it: the node cannot take part (its peers
// cannot open its frames) until one of the two is fixed.
void Daemon::check_membership_in(const Roster& roster) {
  auto problem = check_membership(roster, config_.node_id, node_key_);
  const bool absent = problem && problem->problem == MembershipProblem::not_in_roster;
  const bool other_key = problem && problem->problem == MembershipProblem::key_mismatch;
  set_problem("not_in_roster", absent ? std::optional(problem->message) : std::nullopt);
  set_problem("key_mismatch", other_key ? std::optional(problem->message) : std::nullopt);
  if (const ServerEntry* self = roster.find(config_.node_id)) {
    if (auto mismatch = gossip_endpoint_mismatch(self->gossip, gossip_bound_)) {
      log_event(LogLevel::warn, "roster", *mismatch,
                {{"roster_gossip", format_endpoint(self->gossip)}, {"listen", format_endpoint(gossip_bound_)}});
    }
  }
}

// Each problem that stands, at once when it appears and then every
// kProblemLogIntervalMs (node/standing_problems.h).
void Daemon::log_problems() {
  for (const api::HealthProblem& problem : problems_.due(wall_now())) {
    log_event(LogLevel::error, "problem", problem.message, {{"problem", problem.code}});
  }
}

// Just started (docs/API.md, "Just started"): until this node has compared
// its records with a peer's (a SYNC exchange, within about 30 s when a
// peer is up), or one heartbeat interval (scaled for the fleet's size,
// record/fleet_scale.h) has passed (every live server has sent a report by
// then), its no_data verdicts may be its own silence.
bool Daemon::starting(UnixMs now) const {
  const Roster* roster = agent_->roster();
  if (roster == nullptr) return true;
  const gossip::Counters& counters = agent_->core().counters();
  const bool synced = counters.syncs_received > 0 || counters.summaries_matched > 0;
  return !synced && now - started_ms_ < effective_heartbeat_ms(roster->params, roster->servers.size());
}

// A server not heard from for stale_after (scaled for the fleet's size)
// since this node started is news: every live server sends a report within
// that time (its heartbeat is shorter), wherever the fleet's start has got to.
void Daemon::end_start(UnixMs now) {
  const Roster* roster = agent_->roster();
  if (start_over_ || roster == nullptr) return;
  if (now - started_ms_ < effective_stale_after_ms(roster->params, roster->servers.size())) return;
  start_over_ = true;
  if (auto verdicts = agent_->verdicts()) {
    for (const LogLine& line : silent_since_start(*verdicts, unheard_)) {
      log_event(line.level, line.event, line.message, line.fields);
    }
  }
}

}  // namespace mesh::node

#include "tools/meshctl/store_source.h"

#include <algorithm>
#include <chrono>

#include "node/agent/state_codec.h"
#include "node/api/render.h"
#include "record/country.h"
#include "record/report.h"
#include "storage/txn.h"
#include "tools/meshctl/verdict_decode.h"

namespace mesh::ctl {
namespace {

using Json = nlohmann::json;

UnixMs wall_clock_ms() {
  using namespace std::chrono;
  return duration_cast<milliseconds>(system_clock::now().time_since_epoch()).count();
}

std::uint64_t big_endian(ByteView bytes) {
  std::uint64_t value = 0;
  for (std::uint8_t b : bytes) value = value << 8 | b;
  return value;
}

// The verdicts belong to the roster: same version, same servers and routes
// in the same order (the daemon stores them so; anything else is not its snapshot).
bool matches(const verdict::Evaluation& evaluation, const Roster& roster) {
  if (evaluation.servers.size() != roster.servers.size() || evaluation.routes.size() != roster.routes.size()) {
    return false;
  }
  for (std::size_t i = 0; i < roster.servers.size(); ++i) {
    if (evaluation.servers[i].id != roster.servers[i].id) return false;
  }
  for (std::size_t i = 0; i < roster.routes.size(); ++i) {
    if (evaluation.routes[i].route_id != roster.routes[i].id) return false;
  }
  return true;
}

struct StoredReport {
  UnixMs timestamp_ms = 0;
  Report report;
};

// Every stored report that decodes against `roster`, by roster index. A
// report under another origin's key, or one that does not decode, is left
// out (`meshctl records --verify` says what is wrong with it).
std::vector<std::optional<StoredReport>> stored_reports(const TxnReader& txn, const Roster& roster) {
  std::vector<std::optional<StoredReport>> out(roster.servers.size());
  (void)txn.for_each_record_of_kind(
      static_cast<std::uint8_t>(RecordKind::report), [&](std::uint8_t, std::string_view key, ByteView raw) {
        auto envelope = decode_envelope(raw);
        if (!envelope || envelope->kind != RecordKind::report || envelope->origin != key) return;
        auto index = roster.index_of(envelope->origin);
        if (!index) return;
        auto report = decode_report_payload(envelope->payload, roster, *index, envelope->timestamp_ms);
        if (report) out[*index] = StoredReport{envelope->timestamp_ms, std::move(*report)};
      });
  return out;
}

}  // namespace

StoreSource::StoreSource(std::string data_dir, StoreSnapshot snapshot, UnixMs now_ms)
    : data_dir_(std::move(data_dir)), snapshot_(std::move(snapshot)), now_ms_(now_ms) {}

CtlResult<std::unique_ptr<StoreSource>> StoreSource::open(const std::string& data_dir) {
  std::string error;
  auto snapshot = open_store_snapshot(data_dir, error);
  if (!snapshot) return unusable(error);
  return std::unique_ptr<StoreSource>(new StoreSource(data_dir, std::move(*snapshot), wall_clock_ms()));
}

CtlResult<const api::ApiSnapshot*> StoreSource::view() {
  if (!view_ && !view_error_) {
    if (auto built = build_view(); !built) view_error_ = built.error();
  }
  if (view_error_) return *view_error_;
  return view_.get();
}

Status<Failure> StoreSource::build_view() {
  const ReadTxn& txn = *snapshot_.txn;
  const std::string store = "the store in '" + data_dir_ + "'";
  auto raw_roster = txn.get_roster();
  if (!raw_roster) return unusable(raw_roster.message());
  if (!raw_roster->has_value()) return check_failed(store + " holds no roster yet");
  std::string error;
  bool signature_failed = false;
  auto roster = open_signed_roster(**raw_roster, "", error, signature_failed);
  if (!roster) return unusable(store + ": its roster: " + error);
  auto stored = txn.get_state(agent::kVerdictsKey);
  if (!stored) return unusable(stored.message());
  if (!stored->has_value()) {
    return check_failed(store + " holds no verdicts yet (the daemon has not evaluated any: no "
                                "roster, or it has not run)");
  }
  auto evaluation = decode_stored_verdicts(**stored);
  if (!evaluation) return unusable("the stored verdicts in '" + data_dir_ + "' are not a verdict snapshot: " +
                                   evaluation.message());
  if (evaluation->roster_version != roster->roster.version) {
    return check_failed("the stored verdicts are of roster version " +
                        std::to_string(evaluation->roster_version) + ", " + store + " holds version " +
                        std::to_string(roster->roster.version) + ": the daemon has not evaluated it yet");
  }
  if (!matches(*evaluation, roster->roster)) {
    return unusable("the stored verdicts in '" + data_dir_ + "' do not list the stored roster's servers and routes");
  }
  view_ = std::make_unique<api::ApiSnapshot>();
  view_->taken_ms = now_ms_;
  view_->roster = std::make_shared<const Roster>(std::move(roster->roster));
  view_->evaluation = std::make_shared<const verdict::Evaluation>(std::move(*evaluation));
  add_reports(*view_);
  return Ok{};
}

// As the daemon builds its API snapshot (node/api_snapshot.cc), from the
// stored reports instead of the held ones.
void StoreSource::add_reports(api::ApiSnapshot& view) {
  const Roster& roster = *view.roster;
  const auto reports = stored_reports(*snapshot_.txn, roster);
  const auto& unreliable = view.evaluation->unreliable_observers;
  view.servers.resize(roster.servers.size());
  for (std::uint32_t i = 0; i < roster.servers.size(); ++i) {
    api::ServerState& state = view.servers[i];
    state.entry = &roster.servers[i];
    state.verdict = &view.evaluation->servers[i];
    if (!reports[i]) continue;
    state.last_report_ms = reports[i]->timestamp_ms;
    state.metrics = reports[i]->report.metrics;
    state.self_check = reports[i]->report.self_check;
  }
  for (std::uint32_t observer = 0; observer < roster.servers.size(); ++observer) {
    if (!reports[observer] || reports[observer]->report.view.roster_version != roster.version) continue;
    const ServerEntry& entry = roster.servers[observer];
    const bool discarded = std::find(unreliable.begin(), unreliable.end(), entry.id) != unreliable.end();
    for (const ProbeResult& result : reports[observer]->report.view.results) {
      if (result.target >= view.servers.size() || result.target == observer) continue;
      view.servers[result.target].observers.push_back(api::ObserverView{
          entry.id, entry.country, result.fail_streak, result.ok_streak, result.reason, result.last_probe_ms,
          discarded, result.recovered});
    }
  }
}

CtlResult<Json> StoreSource::servers(const ServerFilter& filter) {
  auto snapshot = view();
  if (!snapshot) return snapshot.error();
  Json out = Json::array();
  for (const api::ServerState& server : (*snapshot)->servers) {
    const auto& routes = server.entry->routes;
    if (!filter.status.empty() && verdict::to_string(server.verdict->status) != filter.status) continue;
    if (!filter.country.empty() && server.entry->country != filter.country) continue;
    if (!filter.route.empty() && std::find(routes.begin(), routes.end(), filter.route) == routes.end()) continue;
    out.push_back(api::server_json(**snapshot, server));
  }
  return out;
}

CtlResult<Json> StoreSource::routes(const std::string& country) {
  if (!country.empty() && !is_iso3166_alpha2(country)) {
    return unusable("--country must be an assigned ISO 3166-1 alpha-2 code in upper case, like DE");
  }
  auto snapshot = view();
  if (!snapshot) return snapshot.error();
  if (!country.empty()) return api::country_routes_json(**snapshot, country);
  Json out = Json::array();
  for (std::size_t i = 0; i < (*snapshot)->roster->routes.size(); ++i) {
    out.push_back(api::route_json(**snapshot, i));
  }
  return out;
}

CtlResult<Json> StoreSource::server(const std::string& id) {
  auto snapshot = view();
  if (!snapshot) return snapshot.error();
  const api::ServerState* server = (*snapshot)->server(id);
  if (server == nullptr) {
    return unusable(no_server_message(id) + " in the roster of the store in '" + data_dir_ + "'");
  }
  return api::server_detail_json(**snapshot, *server);
}

// What the store says of its node: identity, roster, records, boot counter
// and today's volume account (docs/STORAGE.md, "Agent state").
CtlResult<Json> StoreSource::mesh() {
  const ReadTxn& txn = *snapshot_.txn;
  Json out;
  std::string node = "?";
  if (auto identity = txn.get_state(kNodeIdentityKey); identity && identity->has_value()) {
    const Bytes& bytes = **identity;
    node.assign(bytes.begin(), std::find(bytes.begin(), bytes.end(), std::uint8_t{0}));
  }
  out["node"] = node;
  std::uint64_t cap = Parameters{}.volume_bytes_per_day_max;
  out["roster_version"] = nullptr;
  bool roster_held = false;
  if (auto raw = txn.get_roster(); raw && raw->has_value()) {
    std::string error;
    bool signature_failed = false;
    roster_held = true;
    if (auto roster = open_signed_roster(**raw, "", error, signature_failed)) {
      out["roster_version"] = roster->roster.version;
      out["servers"] = roster->roster.servers.size();
      cap = roster->roster.params.volume_bytes_per_day_max;
    }
  }
  std::size_t reports = 0;
  (void)txn.for_each_record([&](std::uint8_t, std::string_view, ByteView) { ++reports; });
  out["reports"] = reports;
  out["records"] = reports + (roster_held ? 1 : 0);
  if (auto boot = txn.find_state(kBootCounterKey); boot && boot->has_value()) {
    out["boot_counter"] = big_endian(**boot);
  }
  Json volume = {{"cap", cap}};
  if (auto stored = txn.get_state(agent::kVolumeKey); stored && stored->has_value()) {
    if (auto record = agent::decode_volume(**stored)) {
      volume["day"] = record->day;
      volume["used_today"] = record->charged_bytes;
      volume["probe_bytes"] = record->probe_bytes;
      volume["sent_bytes"] = record->sent_bytes;
      volume["received_bytes"] = record->received_bytes;
    }
  }
  out["volume"] = volume;
  return out;
}

}  // namespace mesh::ctl

// meshctl records --data DIR [--verify --operator-key HEX]: the signed
// records a store holds (its roster first), and with --verify each checked
// as a node accepts it: the roster against the operator key, each report
// against the roster's key of its origin, and every record against the key
// it is stored under. A check that cannot run is never shown as passed.
#include <cstdio>
#include <vector>

#include <nlohmann/json.hpp>

#include "record/report.h"
#include "storage/store.h"
#include "storage/txn.h"
#include "tools/meshctl/commands.h"
#include "tools/meshctl/exit_codes.h"
#include "tools/meshctl/inspect.h"
#include "tools/meshctl/output.h"

namespace mesh::ctl {
namespace {

struct Row {
  const char* kind = "?";  // a static name (to_string)
  std::string origin;      // as the store lists it: its key, not the record's claim
  std::uint64_t seq = 0;
  UnixMs timestamp_ms = 0;
  std::size_t bytes = 0;
  std::string check;  // "ok", "unchecked", or what failed
};

// What a check needs: the operator key, and the roster once it verified.
struct Checker {
  PublicKey operator_key{};
  const Roster* roster = nullptr;
  std::string roster_failure;  // why `roster` is null
};

std::string check_payload(const Envelope& envelope, const Checker& checker) {
  if (envelope.kind == RecordKind::roster) {
    auto signature = verify_envelope(envelope, checker.operator_key);
    if (!signature) return "operator " + signature.message();
    auto roster = decode_roster_payload(envelope.payload, envelope.seq);
    return roster ? "ok" : roster.message();
  }
  if (checker.roster == nullptr) return "cannot check: " + checker.roster_failure;
  auto index = checker.roster->index_of(envelope.origin);
  if (!index) return "unknown origin: '" + envelope.origin + "' is not in the roster";
  auto signature = verify_envelope(envelope, checker.roster->servers[*index].key);
  if (!signature) return signature.message();
  auto report = decode_report_payload(envelope.payload, *checker.roster, *index, envelope.timestamp_ms);
  return report ? "ok" : "report payload: " + report.message();
}

// Checks one stored record as a node accepts it, and against its store key:
// a valid record filed under another key would be shown as that key's.
std::string check_record(std::uint8_t stored_kind, std::string_view stored_origin, const Envelope& envelope,
                         const Checker& checker) {
  if (stored_kind != static_cast<std::uint8_t>(envelope.kind)) {
    return "stored as kind " + std::to_string(stored_kind) + " but is a " + to_string(envelope.kind);
  }
  if (envelope.origin != stored_origin) {
    return "stored under '" + printable(stored_origin) + "' but signed as '" + envelope.origin + "'";
  }
  return check_payload(envelope, checker);
}

Row row_of(std::string_view stored_origin, ByteView raw) {
  Row row;
  row.origin = std::string(stored_origin);
  row.bytes = raw.size();
  return row;
}

void print_rows(const std::vector<Row>& rows, bool json) {
  if (json) {
    nlohmann::json out = nlohmann::json::array();
    for (const Row& r : rows) {
      out.push_back({{"kind", r.kind}, {"origin", r.origin}, {"seq", r.seq},
                     {"timestamp_ms", r.timestamp_ms}, {"bytes", r.bytes}, {"check", r.check}});
    }
    print_json(out);
    return;
  }
  Table table({"KIND", "ORIGIN", "SEQ", "TIMESTAMP_MS", "BYTES", "CHECK"});
  for (const Row& r : rows) {
    const bool ok = r.check == "ok";
    table.add_row({{r.kind}, {r.origin}, {std::to_string(r.seq)}, {std::to_string(r.timestamp_ms)},
                   {std::to_string(r.bytes)},
                   {r.check, ok ? Colour::green : r.check == "unchecked" ? Colour::none : Colour::red}});
  }
  table.print(output_style(false));
}

// The roster the store holds, as the first row, decoded into `held`. With
// `checker`, it is verified against the operator key and, when it passes,
// is the roster reports are checked against. False when the store cannot
// be read.
bool add_roster_row(const ReadTxn& txn, Checker* checker, std::optional<SignedRoster>& held,
                    std::vector<Row>& rows, std::string& error) {
  auto raw = txn.get_roster();
  if (!raw) {
    error = raw.message();
    return false;
  }
  if (checker != nullptr) checker->roster_failure = "the store holds no roster";
  if (!raw->has_value()) return true;
  Row row = row_of(kOperatorOrigin, **raw);
  row.kind = to_string(RecordKind::roster);
  bool signature_failed = false;
  const std::string key_hex = checker != nullptr ? public_key_to_hex(checker->operator_key) : "";
  held = open_signed_roster(**raw, key_hex, row.check, signature_failed);
  if (auto envelope = decode_envelope(**raw)) {
    row.seq = envelope->seq;
    row.timestamp_ms = envelope->timestamp_ms;
  }
  if (held) row.check = checker != nullptr ? "ok" : "unchecked";
  if (checker != nullptr) {
    checker->roster = held ? &held->roster : nullptr;
    checker->roster_failure = "the roster does not verify";
  }
  rows.push_back(std::move(row));
  return true;
}

}  // namespace

int run_records(const RecordsOptions& options) {
  std::optional<Checker> checker;
  if (options.verify) {
    if (options.operator_key.empty()) {
      std::fprintf(stderr, "meshctl records: --verify needs --operator-key HEX: the roster is checked "
                           "against it, and every report against the roster\n");
      return kExitUsage;
    }
    auto key = public_key_from_hex(options.operator_key);
    if (!key) {
      std::fprintf(stderr, "meshctl records: --operator-key: %s\n", key.message().c_str());
      return kExitUsage;
    }
    checker.emplace();
    checker->operator_key = *key;
  }
  std::string error;
  auto snapshot = open_store_snapshot(options.data_dir, error);
  if (!snapshot) {
    std::fprintf(stderr, "meshctl records: %s\n", error.c_str());
    return kExitUsage;
  }
  const ReadTxn& txn = *snapshot->txn;
  std::vector<Row> rows;
  std::optional<SignedRoster> roster;  // reports are checked against it during the scan
  if (!add_roster_row(txn, checker ? &*checker : nullptr, roster, rows, error)) {
    std::fprintf(stderr, "meshctl records: %s\n", error.c_str());
    return kExitUsage;
  }
  auto scanned = txn.for_each_record([&](std::uint8_t kind, std::string_view origin, ByteView raw) {
    Row row = row_of(origin, raw);
    auto envelope = decode_envelope(raw);
    if (!envelope) {
      row.check = "undecodable: " + envelope.message();
    } else {
      row.kind = to_string(envelope->kind);
      row.seq = envelope->seq;
      row.timestamp_ms = envelope->timestamp_ms;
      row.check = checker ? check_record(kind, origin, *envelope, *checker) : "unchecked";
    }
    rows.push_back(std::move(row));
  });
  if (!scanned) {
    std::fprintf(stderr, "meshctl records: %s\n", scanned.message().c_str());
    return kExitUsage;
  }
  print_rows(rows, options.json);
  bool failed = false;
  for (const Row& row : rows) failed |= row.check != "ok" && row.check != "unchecked";
  return failed ? kExitCheckFailed : kExitOk;
}

}  // namespace mesh::ctl

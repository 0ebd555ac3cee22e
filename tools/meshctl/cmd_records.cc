#include <cstdio>
#include <vector>

#include <nlohmann/json.hpp>

#include "record/report.h"
#include "storage/store.h"
#include "storage/txn.h"
#include "tools/meshctl/commands.h"
#include "tools/meshctl/exit_codes.h"
#include "tools/meshctl/inspect.h"

namespace mesh::ctl {
namespace {

struct Row {
  const char* kind = "?";  // a static name (kind_name)
  std::string origin;
  std::uint64_t seq = 0;
  UnixMs timestamp_ms = 0;
  std::size_t bytes = 0;
  std::string check;  // "ok", "unchecked", or what failed
};

// Checks one stored record as a node accepts it: structure, origin in the
// roster, signature by that origin's key, payload rules.
std::string check_record(const Envelope& envelope, const Roster* roster) {
  if (envelope.kind == RecordKind::roster) return "ok (the roster itself)";
  if (roster == nullptr) return "cannot check: no verified roster";
  auto index = roster->index_of(envelope.origin);
  if (!index) return "unknown origin: '" + envelope.origin + "' is not in the roster";
  auto signature = verify_envelope(envelope, roster->servers[*index].key);
  if (!signature) return signature.message();
  auto report = decode_report_payload(envelope.payload, *roster, *index, envelope.timestamp_ms);
  if (!report) return "report payload: " + report.message();
  return "ok";
}

std::optional<Roster> verified_roster(const TxnReader& txn, const RecordsOptions& options,
                                      std::string& error, bool& signature_failed) {
  auto raw = txn.get_roster();
  if (!raw) {
    error = raw.message();
    return std::nullopt;
  }
  if (!raw->has_value()) {
    error = "the store holds no roster, so no record can be checked";
    return std::nullopt;
  }
  auto opened = open_signed_roster(**raw, options.operator_key, error, signature_failed);
  if (!opened) return std::nullopt;
  return std::move(opened->roster);
}

void print_rows(const std::vector<Row>& rows, bool json) {
  if (json) {
    nlohmann::json out = nlohmann::json::array();
    for (const Row& r : rows) {
      out.push_back({{"kind", r.kind}, {"origin", r.origin}, {"seq", r.seq},
                     {"timestamp_ms", r.timestamp_ms}, {"bytes", r.bytes}, {"check", r.check}});
    }
    std::printf("%s\n", out.dump(2).c_str());
    return;
  }
  std::printf("%-7s %-24s %10s %15s %7s  %s\n", "KIND", "ORIGIN", "SEQ", "TIMESTAMP_MS", "BYTES", "CHECK");
  for (const Row& r : rows) {
    std::printf("%-7s %-24s %10llu %15lld %7zu  %s\n", r.kind, r.origin.c_str(),
                static_cast<unsigned long long>(r.seq), static_cast<long long>(r.timestamp_ms),
                r.bytes, r.check.c_str());
  }
}

}  // namespace

int run_records(const RecordsOptions& options) {
  std::string error;
  auto snapshot = open_store_snapshot(options.data_dir, error);
  if (!snapshot) {
    std::fprintf(stderr, "meshctl records: %s\n", error.c_str());
    return kExitUsage;
  }
  const ReadTxn& txn = *snapshot->txn;
  std::optional<Roster> roster;
  bool failed = false;
  if (options.verify) {
    bool signature_failed = false;
    roster = verified_roster(txn, options, error, signature_failed);
    if (!roster) {
      std::fprintf(stderr, "meshctl records: roster: %s\n", error.c_str());
      if (!signature_failed) return kExitUsage;
      failed = true;
    }
  }
  std::vector<Row> rows;
  auto scanned = txn.for_each_record([&](std::uint8_t, std::string_view origin, ByteView raw) {
    Row row;
    row.origin = std::string(origin);
    row.bytes = raw.size();
    auto envelope = decode_envelope(raw);
    if (!envelope) {
      row.check = "undecodable: " + envelope.message();
      failed = true;
    } else {
      row.kind = kind_name(envelope->kind);
      row.seq = envelope->seq;
      row.timestamp_ms = envelope->timestamp_ms;
      row.check = options.verify ? check_record(*envelope, roster ? &*roster : nullptr) : "unchecked";
      if (options.verify && row.check.rfind("ok", 0) != 0) failed = true;
    }
    rows.push_back(std::move(row));
  });
  if (!scanned) {
    std::fprintf(stderr, "meshctl records: %s\n", scanned.message().c_str());
    return kExitUsage;
  }
  print_rows(rows, options.json);
  return failed ? kExitCheckFailed : kExitOk;
}

}  // namespace mesh::ctl

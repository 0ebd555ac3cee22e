// Checks tests/vectors/records.json (made by tests/vectors/make_vectors.cc):
// every vector decodes and verifies to its expected result, ok vectors carry
// the stated fields, and re-encoding them reproduces the exact bytes.
#include <doctest/doctest.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <set>

#include "record/envelope.h"
#include "record/report.h"
#include "record/roster.h"

using namespace mesh;

namespace {

nlohmann::json load_vectors() {
  std::ifstream in(std::string(MESHNODE_SOURCE_DIR) + "/tests/vectors/records.json");
  REQUIRE(in.good());
  return nlohmann::json::parse(in);
}

Bytes hex_bytes(const nlohmann::json& value) {
  std::optional<Bytes> bytes = from_hex(value.get<std::string>());
  REQUIRE(bytes.has_value());
  return *bytes;
}

// Decode then verify: "ok" or the name of the first RecordError.
std::string outcome(const Bytes& record, const PublicKey& key) {
  auto envelope = decode_envelope(record);
  if (!envelope) return to_string(envelope.code());
  auto verified = verify_envelope(*envelope, key);
  if (!verified) return to_string(verified.code());
  return "ok";
}

void check_ok_vector(const nlohmann::json& v, const Bytes& record) {
  Envelope envelope = decode_envelope(record).value();
  CHECK(static_cast<int>(envelope.kind) == v["kind"].get<int>());
  CHECK(envelope.origin == v["origin"].get<std::string>());
  CHECK(envelope.seq == v["seq"].get<std::uint64_t>());
  CHECK(envelope.timestamp_ms == v["timestamp_ms"].get<std::int64_t>());
  CHECK(envelope.payload == hex_bytes(v["payload"]));
  KeyPair signer = key_pair_from_seed(hex_bytes(v["signer_seed"]));
  CHECK(public_key_to_hex(signer.public_key) == v["public_key"].get<std::string>());
  Bytes again = encode_signed_record(envelope.kind, envelope.origin, envelope.seq,
                                     envelope.timestamp_ms, envelope.payload, signer.secret_key);
  CHECK(again == record);
}

}  // namespace

TEST_CASE("every record vector gives its expected result") {
  nlohmann::json vectors = load_vectors();
  REQUIRE(vectors.is_array());
  std::set<std::string> names;
  for (const nlohmann::json& v : vectors) {
    std::string name = v["name"].get<std::string>();
    CAPTURE(name);
    names.insert(name);
    PublicKey key = public_key_from_hex(v["public_key"].get<std::string>()).value();
    Bytes record = hex_bytes(v["record"]);
    CHECK(outcome(record, key) == v["expect"].get<std::string>());
    if (v["expect"] == "ok") check_ok_vector(v, record);
  }
  for (const char* required :
       {"roster_ok", "report_ok", "bad_signature", "trailing_byte", "wrong_version",
        "unknown_kind", "truncated", "signature_63_bytes", "origin_invalid"}) {
    CHECK_MESSAGE(names.count(required) == 1, required);
  }
}

TEST_CASE("the ok vectors' payloads decode: the roster, then the report against it") {
  nlohmann::json vectors = load_vectors();
  std::optional<Roster> roster;
  for (const nlohmann::json& v : vectors) {
    if (v["name"] == "roster_ok") {
      auto decoded = decode_roster_payload(hex_bytes(v["payload"]), v["seq"].get<std::uint64_t>());
      REQUIRE_MESSAGE(decoded.ok(), decoded.message());
      roster = *decoded;
    }
  }
  REQUIRE(roster.has_value());
  CHECK(roster->servers.size() == 3);
  std::set<std::string> decoded_reports;
  for (const nlohmann::json& v : vectors) {
    if (v["name"] != "report_ok" && v["name"] != "report_recovered" && v["name"] != "report_warming" &&
        v["name"] != "report_alert_sender") {
      continue;
    }
    decoded_reports.insert(v["name"].get<std::string>());
    std::uint32_t origin = roster->index_of(v["origin"].get<std::string>()).value();
    auto report = decode_report_payload(hex_bytes(v["payload"]), *roster, origin,
                                        v["timestamp_ms"].get<std::int64_t>());
    REQUIRE_MESSAGE(report.ok(), report.message());
    REQUIRE(report->view.results.size() == 2);
    CHECK(report->view.results[0].fail_streak == 0);
    CHECK(report->view.results[1].reason == ProbeFailure::tcp_timeout);
    CHECK(report->view.results[0].recovered == (v["name"] == "report_recovered"));
    CHECK_FALSE(report->view.results[1].recovered);
    CHECK(report->warming == (v["name"] == "report_warming"));
    CHECK(report->alert_sender == (v["name"] == "report_alert_sender"));
    CHECK(roster->servers[origin].key == public_key_from_hex(v["public_key"].get<std::string>()).value());
  }
  CHECK(decoded_reports.size() == 4);
}

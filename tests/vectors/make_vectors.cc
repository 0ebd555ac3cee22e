// Generates the test vectors (docs/PROTOCOL.md, "Test vectors"):
// tests/vectors/records.json (records) and tests/vectors/gossip.json (link
// keys, a sealed frame, hash32, the digest, the overlay order;
// tests/vectors/gossip_vectors.cc). Deterministic: fixed seeds, fixed
// times, and Ed25519 signatures are deterministic, so a rerun reproduces the
// files byte for byte. Run by hand after a deliberate format change:
//   build/tests/record/make_vectors records > tests/vectors/records.json
//   build/tests/record/make_vectors gossip > tests/vectors/gossip.json
#include <msgpack.hpp>
#include <nlohmann/json.hpp>

#include <array>
#include <cstdio>
#include <functional>

#include "record/envelope.h"
#include "record/report.h"
#include "record/roster_toml.h"
#include "tests/vectors/gossip_vectors.h"

namespace mesh {
namespace {

constexpr UnixMs kTimestamp = 1'700'000'000'000;
constexpr std::uint8_t kOperatorSeed = 0x4f;
constexpr std::uint8_t kNodeSeed = 0x41;  // de-fra-1 in the roster below
constexpr std::uint8_t kOtherSeed = 0x42;

KeyPair key_of(std::uint8_t seed_byte) {
  std::array<std::uint8_t, 32> seed{};
  seed.fill(seed_byte);
  return key_pair_from_seed(seed);
}

// Every parameter is spelled out: the vectors must not move when a
// default does (roster_ok's payload carries them, and the digest and
// summary vectors hash roster_ok).
const char* kRosterToml = R"(version = 1
[params]
heartbeat_interval_ms = 60000
stale_after_ms = 180000
probe_interval_ms = 60000
fail_streak = 3
unreliable_fraction_permille = 500
unreliable_min_targets = 4
witnesses_per_country = 3
quorum_witnesses = 3
epoch_ms = 3600000
max_clock_skew_ms = 30000
volume_bytes_per_day_max = 209715200
[[routes]]
id = "eu"
name = "Europe"
[[servers]]
id = "de-fra-1"
country = "DE"
probe = "203.0.113.11:443"
sni = "www.example.com"
gossip = "203.0.113.11:7946"
key = "db995fe25169d141cab9bbba92baa01f9f2e1ece7df4cb2ac05190f37fcc1f9d"
routes = ["eu"]
[[servers]]
id = "nl-ams-1"
country = "NL"
probe = "198.51.100.21:443"
sni = "cdn.example.net"
gossip = "198.51.100.21:7946"
key = "2152f8d19b791d24453242e15f2eab6cb7cffa7b6a5ed30097960e069881db12"
routes = ["eu"]
[[servers]]
id = "fi-hel-1"
country = "FI"
probe = "192.0.2.32:443"
sni = "www.example.org"
gossip = "192.0.2.32:7946"
key = "22fc297792f0b6ffc0bfcfdb7edb0c0aa14e025a365ec0e342e86e3829cb74b6"
routes = ["eu"]
)";

// de-fra-1's view of roster version 1: target 1 ok (`ok_streak`, flagged
// recovered or not), target 2 failing.
Bytes report_payload(std::uint32_t ok_streak = 12, bool recovered = false, bool warming = false,
                     bool alert_sender = false) {
  Report report;
  report.warming = warming;
  report.alert_sender = alert_sender;
  report.metrics = {137, 24'117'248, 67'108'864, 310'000, 953'674, 12'500'000, 12'100'000, 1420,
                    2'592'000, 412};
  report.view.roster_version = 1;
  report.view.results = {
      {1, 0, ok_streak, kTimestamp - 58'000, kTimestamp - 58'000, ProbeFailure::none, recovered},
      {2, 3, 0, kTimestamp - 12'000, kTimestamp - 190'000, ProbeFailure::tcp_timeout}};
  return encode_report_payload(report, kTimestamp);
}

// The same view a probe later: target 1 still ok, now flagged recovered
// (view element 5, docs/PROTOCOL.md "Report payload").
Bytes recovered_report_payload() { return report_payload(2, true); }

// report_ok's view from a node that restarted and has not caught up yet:
// the fourth top-level element, flags 1 (warming; docs/PROTOCOL.md
// "Report payload").
Bytes warming_report_payload() { return report_payload(12, false, true); }

// report_ok's view from the node that delivers the fleet's alerts: flags 2
// (alert sender; docs/PANELS.md "Takeover").
Bytes alert_sender_report_payload() { return report_payload(12, false, false, true); }

// A flapping node's report (self_check elements 4 and 5: 3 changes, held
// out 40 s more) whose failure of target 2 is unanswered since 30 s before
// the timestamp (failure element 6; docs/PROTOCOL.md "Report payload").
Bytes flapping_unanswered_report_payload() {
  Report report;
  report.flapping = {3, 40'000};
  report.metrics = {137, 24'117'248, 67'108'864, 310'000, 953'674, 12'500'000, 12'100'000, 1420,
                    2'592'000, 412};
  report.view.roster_version = 1;
  report.view.results = {
      {1, 0, 12, kTimestamp - 58'000, kTimestamp - 58'000, ProbeFailure::none},
      {2, 3, 0, kTimestamp - 12'000, kTimestamp - 190'000, ProbeFailure::tcp_timeout, false,
       kTimestamp - 30'000}};
  return encode_report_payload(report, kTimestamp);
}

// de-fra-1's view of another roster (version 7, so only the layout is
// checked against it): `ok` targets ok, no failure. The ok set is written
// in whichever form is shorter (docs/PROTOCOL.md, "Target sets").
Bytes other_roster_report_payload(const std::vector<std::uint32_t>& ok) {
  Report report;
  report.metrics = {137, 24'117'248, 67'108'864, 310'000, 953'674, 12'500'000, 12'100'000, 1420,
                    2'592'000, 412};
  report.view.roster_version = 7;
  for (std::uint32_t target : ok) {
    report.view.results.push_back(
        {target, 0, 12, kTimestamp - 58'000, kTimestamp - 58'000, ProbeFailure::none});
  }
  return encode_report_payload(report, kTimestamp);
}

struct Fields {
  std::uint64_t version = kEnvelopeFormatVersion;
  std::uint64_t kind = 2;
  std::string origin = "de-fra-1";
  std::uint64_t seq = 5;
  std::uint64_t timestamp_ms = kTimestamp;
  Bytes payload;
  bool payload_as_str = false;
  std::size_t signature_bytes = kSignatureBytes;
};

// Packs any field values (even invalid ones) and signs like the encoder.
Bytes hand_built(const Fields& f, const SecretKey& key) {
  msgpack::sbuffer buffer;
  msgpack::packer<msgpack::sbuffer> packer(buffer);
  packer.pack_array(7);
  packer.pack_uint64(f.version);
  packer.pack_uint64(f.kind);
  packer.pack_str(static_cast<std::uint32_t>(f.origin.size()));
  packer.pack_str_body(f.origin.data(), static_cast<std::uint32_t>(f.origin.size()));
  packer.pack_uint64(f.seq);
  packer.pack_uint64(f.timestamp_ms);
  auto size = static_cast<std::uint32_t>(f.payload.size());
  f.payload_as_str ? packer.pack_str(size) : packer.pack_bin(size);
  packer.pack_bin_body(reinterpret_cast<const char*>(f.payload.data()), size);
  Signature s = sign_detached(key, ByteView(reinterpret_cast<const std::uint8_t*>(buffer.data()),
                                            buffer.size()));
  packer.pack_bin(static_cast<std::uint32_t>(f.signature_bytes));
  packer.pack_bin_body(reinterpret_cast<const char*>(s.data()),
                       static_cast<std::uint32_t>(f.signature_bytes));
  const auto* begin = reinterpret_cast<const std::uint8_t*>(buffer.data());
  return Bytes(begin, begin + buffer.size());
}

nlohmann::json vector(const std::string& name, const std::string& note, const PublicKey& key,
                      const Bytes& record, const std::string& expect) {
  return {{"name", name}, {"note", note}, {"public_key", public_key_to_hex(key)},
          {"record", to_hex(record)}, {"expect", expect}};
}

nlohmann::json ok_vector(const std::string& name, const std::string& note, std::uint8_t seed,
                         RecordKind kind, const std::string& origin, std::uint64_t seq,
                         const Bytes& payload) {
  KeyPair key = key_of(seed);
  Bytes record = encode_signed_record(kind, origin, seq, kTimestamp, payload, key.secret_key);
  nlohmann::json v = vector(name, note, key.public_key, record, "ok");
  v["signer_seed"] = to_hex(Bytes(32, seed));
  v["kind"] = static_cast<int>(kind);
  v["origin"] = origin;
  v["seq"] = seq;
  v["timestamp_ms"] = kTimestamp;
  v["payload"] = to_hex(payload);
  return v;
}

nlohmann::json all_vectors() {
  Roster roster = roster_from_toml(kRosterToml, 0).value();
  Bytes report = report_payload();
  KeyPair node = key_of(kNodeSeed);
  nlohmann::json out = nlohmann::json::array();
  out.push_back(ok_vector("roster_ok", "operator-signed roster of 3 servers, version (seq) 1",
                          kOperatorSeed, RecordKind::roster, kOperatorOrigin, 1,
                          encode_roster_payload(roster)));
  out.push_back(ok_vector("report_ok", "report of de-fra-1 (index 0) on roster version 1",
                          kNodeSeed, RecordKind::report, "de-fra-1", 5, report));
  Bytes good = *from_hex(out[1]["record"].get<std::string>());
  Bytes flipped = good;
  flipped.back() ^= 0x01;
  out.push_back(vector("bad_signature", "report_ok with the last signature bit flipped",
                       node.public_key, flipped, "bad_signature"));
  Bytes tampered = good;
  tampered[good.size() - 66 - 1] ^= 0x01;  // last payload byte
  out.push_back(vector("payload_tampered", "report_ok with one payload bit flipped",
                       node.public_key, tampered, "bad_signature"));
  out.push_back(vector("wrong_key", "report_ok checked against nl-ams-1's key",
                       key_of(kOtherSeed).public_key, good, "bad_signature"));
  Bytes trailing = good;
  trailing.push_back(0x00);
  out.push_back(vector("trailing_byte", "report_ok followed by one 0x00 byte", node.public_key,
                       trailing, "malformed"));
  out.push_back(vector("truncated", "report_ok without its last 10 bytes", node.public_key,
                       Bytes(good.begin(), good.end() - 10), "malformed"));
  Fields f;
  f.payload = report;
  Fields v2 = f;
  v2.version = 2;
  out.push_back(vector("wrong_version", "format_version 2, correctly signed", node.public_key,
                       hand_built(v2, node.secret_key), "unknown_version"));
  Fields kind = f;
  kind.kind = 3;
  out.push_back(vector("unknown_kind", "kind 3, correctly signed", node.public_key,
                       hand_built(kind, node.secret_key), "unknown_kind"));
  Fields short_sig = f;
  short_sig.signature_bytes = 63;
  out.push_back(vector("signature_63_bytes", "signature bin of 63 bytes", node.public_key,
                       hand_built(short_sig, node.secret_key), "malformed"));
  Fields origin = f;
  origin.origin = "De_Fra 1";
  out.push_back(vector("origin_invalid", "origin breaks the server id rule", node.public_key,
                       hand_built(origin, node.secret_key), "malformed"));
  Fields long_origin = f;
  long_origin.origin = std::string(65, 'a');
  out.push_back(vector("origin_too_long", "origin of 65 bytes", node.public_key,
                       hand_built(long_origin, node.secret_key), "oversize"));
  Fields seq0 = f;
  seq0.seq = 0;
  out.push_back(vector("seq_zero", "seq 0 (seq starts at 1)", node.public_key,
                       hand_built(seq0, node.secret_key), "malformed"));
  Fields str_payload = f;
  str_payload.payload_as_str = true;
  out.push_back(vector("payload_not_bin", "payload encoded as str instead of bin",
                       node.public_key, hand_built(str_payload, node.secret_key), "malformed"));
  Fields roster_from_node = f;
  roster_from_node.kind = 1;
  out.push_back(vector("roster_not_from_operator", "kind roster with origin de-fra-1",
                       node.public_key, hand_built(roster_from_node, node.secret_key),
                       "malformed"));
  out.push_back(ok_vector("report_recovered",
                          "report of de-fra-1 (index 0), seq 6: target 1 ok and flagged recovered",
                          kNodeSeed, RecordKind::report, "de-fra-1", 6, recovered_report_payload()));
  out.push_back(ok_vector("report_flapping_unanswered",
                          "report of de-fra-1 (index 0), seq 7: flapping (3 changes, 40 s held out) and "
                          "target 2's failure unanswered since 30 s ago",
                          kNodeSeed, RecordKind::report, "de-fra-1", 7, flapping_unanswered_report_payload()));
  out.push_back(ok_vector("report_warming",
                          "report of de-fra-1 (index 0), seq 8: report_ok's view from a node that restarted "
                          "and is warming (flags 1)",
                          kNodeSeed, RecordKind::report, "de-fra-1", 8, warming_report_payload()));
  out.push_back(ok_vector("report_alert_sender",
                          "report of de-fra-1 (index 0), seq 9: report_ok's view from the node that "
                          "delivers the fleet's alerts (flags 2)",
                          kNodeSeed, RecordKind::report, "de-fra-1", 9, alert_sender_report_payload()));
  out.push_back(ok_vector("report_ok_bitmap",
                          "report of de-fra-1 (index 0), seq 10, on roster version 7: targets 1 to 12 ok, "
                          "a bitmap (4 bytes; as gaps 13)",
                          kNodeSeed, RecordKind::report, "de-fra-1", 10,
                          other_roster_report_payload({1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12})));
  out.push_back(ok_vector("report_ok_gaps",
                          "report of de-fra-1 (index 0), seq 11, on roster version 7: targets 1, 140 and 900 ok, "
                          "gaps 1, 139, 760 (7 bytes; as a bitmap 115)",
                          kNodeSeed, RecordKind::report, "de-fra-1", 11, other_roster_report_payload({1, 140, 900})));
  return out;
}

}  // namespace
}  // namespace mesh

int main(int argc, char** argv) {
  const std::string which = argc > 1 ? argv[1] : "records";
  const nlohmann::json records = mesh::all_vectors();
  if (which == "records") {
    std::printf("%s\n", records.dump(2).c_str());
  } else if (which == "gossip") {
    std::printf("%s\n", mesh::gossip_vectors(records).dump(2).c_str());
  } else {
    std::fprintf(stderr, "usage: make_vectors [records|gossip]\n");
    return 2;
  }
  return 0;
}

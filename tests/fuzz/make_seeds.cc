// fuzz_make_seeds SOURCE_DIR OUT_DIR: writes the seed inputs of every fuzz
// target to OUT_DIR/<target>/seed-<name>, from the test vectors
// (tests/vectors/records.json, gossip.json), the documented examples
// (docs/examples/, scenarios/) and the tests' own inputs. Deterministic: the
// committed corpus under tests/fuzz/corpus/ starts from its output, then
// grows by `scripts/fuzz.sh --merge` (tests/fuzz/README.md).
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "gossip/link.h"
#include "gossip/wire.h"
#include "record/envelope.h"
#include "record/report.h"
#include "record/roster.h"
#include "record/roster_toml.h"
#include "tests/api/fixture.h"
#include "tests/fuzz/fuzz_support.h"

namespace {

using namespace mesh;
namespace fs = std::filesystem;

fs::path g_out;

void write(const std::string& target, const std::string& name, const std::string& bytes) {
  fs::create_directories(g_out / target);
  std::ofstream(g_out / target / ("seed-" + name), std::ios::binary) << bytes;
}
void write(const std::string& target, const std::string& name, const Bytes& bytes) {
  write(target, name, std::string(bytes.begin(), bytes.end()));
}

std::string read_text(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

Bytes hex(const std::string& text) { return from_hex(text).value(); }

Bytes sign(RecordKind kind, const std::string& origin, std::uint64_t seq, ByteView payload,
           std::uint8_t seed) {
  return encode_signed_record(kind, origin, seq, fuzz::kVectorTimestampMs, payload,
                              fuzz::key_of(seed).secret_key);
}

// A roster of `count` servers with IPv6 and DNS hosts and several routes.
Roster wide_roster(std::uint64_t version, std::uint32_t count) {
  Roster roster = fuzz::vector_roster();
  roster.version = version;
  roster.routes.push_back(Route{"de", "Deutschland \xc3\xbc"});
  for (std::uint32_t i = 3; i < count; ++i) {
    ServerEntry server = roster.servers[0];
    server.id = "x-" + std::to_string(i);
    server.country = i % 2 ? "DE" : "SE";
    server.probe = Endpoint{"2001:db8::" + std::to_string(i), 8443};
    server.gossip = Endpoint{"node" + std::to_string(i) + ".example.net", 7946};
    server.key = fuzz::key_of(static_cast<std::uint8_t>(0x50 + i)).public_key;
    server.routes = {"eu", "de"};
    roster.servers.push_back(server);
  }
  roster.params.witnesses_per_country = 0;
  return roster;
}

Report rich_report(std::uint64_t roster_version) {
  Report report;
  report.self_check = SelfCheck{false, true, "listener refused: \xe2\x80\x9c" "443\xe2\x80\x9d"};
  report.metrics = {999, 1, 2, 3, 4, 5, 6, 7, 8, 9};
  report.view.roster_version = roster_version;
  const UnixMs t = fuzz::kVectorTimestampMs;
  report.view.results = {{1, 0, 4, t - 1'000, t - 1'000, ProbeFailure::none},
                         {2, 7, 0, t - 2'000, 0, ProbeFailure::tls_bad_peer}};
  return report;
}

void record_seeds(const nlohmann::json& records) {
  for (const auto& v : records) {
    write("envelope", v["name"].get<std::string>(), hex(v["record"].get<std::string>()));
    if (v.contains("payload")) {
      write(v["kind"] == 1 ? "roster_payload" : "report_payload", v["name"].get<std::string>(),
            hex(v["payload"].get<std::string>()));
    }
  }
  write("roster_payload", "wide", encode_roster_payload(wide_roster(1, 12)));
  write("report_payload", "rich", encode_report_payload(rich_report(1), fuzz::kVectorTimestampMs));
  write("report_payload", "other_version",
        encode_report_payload(rich_report(9), fuzz::kVectorTimestampMs));
  write("report_payload", "empty", encode_report_payload(Report{}, fuzz::kVectorTimestampMs));
  write("envelope", "wide_roster",
        sign(RecordKind::roster, kOperatorOrigin, 2, encode_roster_payload(wide_roster(2, 12)),
             fuzz::kOperatorSeed));
}

Bytes prefixed(std::uint8_t mode, const Bytes& bytes) {
  Bytes out{mode};
  out.insert(out.end(), bytes.begin(), bytes.end());
  return out;
}

Bytes framed(std::uint8_t mode, const gossip::FrameContent& content) {
  Bytes out{mode};
  gossip::encode_frame_content(content, out);
  return out;
}

void frame_seeds(const nlohmann::json& records, const nlohmann::json& gossip_vectors) {
  using gossip::Body;
  using gossip::Entry;
  using gossip::FrameContent;
  const Bytes roster_ok = hex(records[0]["record"].get<std::string>());
  const Bytes report_ok = hex(records[1]["record"].get<std::string>());
  const Bytes fi_report = sign(RecordKind::report, "fi-hel-1", 3,
                               encode_report_payload(Report{}, fuzz::kVectorTimestampMs), 0x43);
  Roster next = fuzz::vector_roster();
  next.version = 2;
  next.routes.push_back(Route{"nl", "Netherlands"});
  next.servers[1].routes.push_back("nl");
  const Bytes roster_v2 = sign(RecordKind::roster, kOperatorOrigin, 2, encode_roster_payload(next),
                               fuzz::kOperatorSeed);
  FrameContent c;
  c.roster_version = 1;
  write("frame", "empty", framed(1, c));
  c.bodies = {Body::owned(false, report_ok)};
  write("frame", "push_report", framed(1, c));
  write("frame", "push_report_replayed", framed(3, c));
  c.bodies = {Body::owned(true, fi_report), Body::owned(false, roster_ok)};
  write("frame", "repair_and_push", framed(2, c));
  c.bodies = {Body::owned(false, roster_v2)};
  write("frame", "push_roster_v2", framed(1, c));
  c.bodies.clear();
  c.ihave = {Entry{RecordKind::report, 0, 5, 0}, Entry{RecordKind::report, 2, 9, 0}};
  c.graft = {Entry{RecordKind::roster, 0, 1, 0}};
  c.prune = {Entry{RecordKind::report, 2, 1, 0}};
  write("frame", "ihave_graft_prune", framed(1, c));
  c = FrameContent{};
  c.roster_version = 1;
  c.sync = std::vector<Entry>{Entry{RecordKind::roster, 0, 1, 0x726f7a8a},
                              Entry{RecordKind::report, 0, 5, 0xf91e4a2d}};
  write("frame", "sync", framed(2, c));
  c.sync.reset();
  c.sync_reply = std::vector<Entry>{Entry{RecordKind::report, 2, 1, 1}};
  write("frame", "sync_reply", framed(1, c));
  c.sync_reply.reset();
  c.summary = gossip::Summary{1'700'000'000'000, {}};
  for (std::size_t i = 0; i < gossip::kSummaryBytes; ++i) c.summary->digest[i] = static_cast<std::uint8_t>(i);
  write("frame", "summary", framed(1, c));
  c = FrameContent{};
  c.roster_version = 5;
  c.ihave = {Entry{RecordKind::roster, 0, 5, 0}};
  write("frame", "newer_version", framed(1, c));
  // Frames off the wire: the vectors' sealed frame, and one sealed for the
  // fuzz core's node by de-fra-1 (it does not open there: a new boot).
  write("frame", "wire_vector",
        prefixed(0, hex(gossip_vectors["sealed_frame"]["frame"].get<std::string>())));
  gossip::LinkCrypto sender(fuzz::key_of(0x41).secret_key, 9);
  c = FrameContent{};
  c.roster_version = 1;
  auto sealed = sender.seal(fuzz::vector_roster().servers[1].key, encode_frame_content(c));
  write("frame", "wire_sealed", prefixed(0, sealed.value()));
}

const char* const kRequests[][2] = {
    {"healthz", "GET /healthz HTTP/1.1\r\nHost: n1\r\n\r\n"},
    {"page", "GET / HTTP/1.1\r\nHost: n1\r\nConnection: close\r\n\r\n"},
    {"routes", "GET /v1/routes HTTP/1.1\r\nHost: n1\r\nAuthorization: Bearer @read\r\n\r\n"},
    {"route", "GET /v1/routes/eu HTTP/1.1\r\nAuthorization: Bearer @read\r\n\r\n"},
    {"servers", "GET /v1/servers?status=unreachable&route=eu HTTP/1.1\r\nAuthorization: Bearer @read\r\n\r\n"},
    {"server", "GET /v1/servers/nl-1 HTTP/1.1\r\nAuthorization: Bearer @admin\r\n\r\n"},
    {"mesh", "GET /v1/mesh HTTP/1.1\r\nAuthorization: Bearer @read\r\n\r\n"},
    {"metrics", "GET /metrics HTTP/1.0\r\nAuthorization: Bearer @read\r\n\r\n"},
    {"long_poll", "GET /v1/routes?index=7&wait=30s HTTP/1.1\r\nAuthorization: Bearer @read\r\n\r\n"},
    {"poll_moved", "GET /v1/servers?index=3 HTTP/1.1\r\nAuthorization: Bearer @read\r\n\r\n"},
    {"roster_put", "PUT /v1/roster HTTP/1.1\r\nAuthorization: Bearer @admin\r\nContent-Length: 4\r\n\r\n\x97\x01\x01\xa8"},
    {"roster_read_token", "PUT /v1/roster HTTP/1.1\r\nAuthorization: Bearer @read\r\nContent-Length: 1\r\n\r\nx"},
    {"chunked", "PUT /v1/roster HTTP/1.1\r\nAuthorization: Bearer @admin\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n0\r\n\r\n"},
    {"bad_token", "GET /v1/routes HTTP/1.1\r\nAuthorization: Bearer nope\r\n\r\n"},
    {"wrong_method", "POST /v1/routes HTTP/1.1\r\nContent-Length: 0\r\n\r\n"},
    {"not_found", "GET /v2/%41?x=%zz HTTP/1.1\r\n\r\n"},
    {"pipelined", "GET /healthz HTTP/1.1\r\n\r\nGET /v1/mesh HTTP/1.1\r\nAuthorization: Bearer @read\r\n\r\n"},
};

void request_seeds() {
  for (const auto& [name, text] : kRequests) {
    std::string request = text;
    for (auto [marker, token] : {std::pair{"@read", api::testing::kReadToken},
                                 std::pair{"@admin", api::testing::kAdminToken}}) {
      if (auto at = request.find(marker); at != std::string::npos) {
        request.replace(at, std::string(marker).size(), token);
      }
    }
    write("api_request", name, request);
  }
}

const char* const kScenarioEvents = R"(duration = "30m"
seed = 7
[fleet]
nodes = 6
countries = 3
[sim]
tick_interval = "1s"
probe_timeout = "10s"
[[event]]
at = "2m"
kind = "partition"
groups = [["C0"], ["C1", "c2"]]
[[event]]
at = "3m"
kind = "heal"
[[event]]
at = "4m"
kind = "clock_skew"
servers = "*"
skew = "-5m"
[[event]]
at = "5m"
kind = "set_link"
from = "*"
to = ["C1"]
loss_permille = 100
latency = "50ms"
[[event]]
at = "6m"
kind = "roster_add"
[[event.add]]
id = "new-1"
country = "C0"
[[event]]
at = "7m"
kind = "inject_forged"
tamper_frames = 3
[[event]]
at = "8m"
kind = "block"
servers = ["C0"]
from = "C1"
both_directions = true
port = "probe"
[[expect]]
kind = "digests_agree"
at = "20m"
[[expect]]
kind = "counter_at_most"
counter = "frames_undecryptable"
value = 1000
)";

void text_seeds(const fs::path& source) {
  write("roster_toml", "docs_example", read_text(source / "docs/examples/roster.toml"));
  write("node_config", "docs_example", read_text(source / "docs/examples/meshnode.toml"));
  write("scenario", "example", read_text(source / "scenarios/example.toml"));
  write("scenario", "minimal", std::string("duration = \"10m\"\n[fleet]\nnodes = 8\ncountries = 2\n"));
  write("scenario", "events", std::string(kScenarioEvents));
  write("roster_toml", "vectors", roster_to_toml(fuzz::vector_roster()));
  write("roster_toml", "wide", roster_to_toml(wide_roster(3, 12)));
  // tests/node/config_fixture.h kBase (a copy: that header is doctest's),
  // and the minimal required keys.
  write("node_config", "test_base", std::string(R"(node_id = "de-fra-1"
key_file = "/etc/meshnode/node.key"
operator_key = "db995fe25169d141cab9bbba92baa01f9f2e1ece7df4cb2ac05190f37fcc1f9d"

[gossip]
connect_timeout_ms = 5000

[probe]
tls_every = 7

[self_check]
listener_tls = true

[volume]
cap_bytes_per_day = 0

[log]
level = "info"
)"));
  write("node_config", "api_tls", std::string(R"(node_id = "n-1"
key_file = "k"
operator_key = "DB995FE25169D141CAB9BBBA92BAA01F9F2E1ECE7DF4CB2AC05190F37FCC1F9D"
[gossip]
listen = "[::1]:4716"
[self_check]
listener = "127.0.0.1:8443"
service = "systemd:openvpn.service"
[api]
listen = "10.0.0.1:4717"
tls_cert_file = "/c.pem"
tls_key_file = "/k.pem"
threads = 4
)"));
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 3) {
    std::fprintf(stderr, "usage: fuzz_make_seeds SOURCE_DIR OUT_DIR\n");
    return 2;
  }
  const fs::path source = argv[1];
  g_out = argv[2];
  const auto records = nlohmann::json::parse(read_text(source / "tests/vectors/records.json"));
  const auto gossip_vectors = nlohmann::json::parse(read_text(source / "tests/vectors/gossip.json"));
  record_seeds(records);
  frame_seeds(records, gossip_vectors);
  request_seeds();
  text_seeds(source);
  return 0;
}

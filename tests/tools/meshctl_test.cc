// meshctl as an operator runs it: a real process, real key files, a real
// LMDB store. Every bad input shows its exit code and message, and writes
// nothing; a check that did not run never passes. The --api paths against
// live daemons are in tests/node/meshctl_api_test.cc; here, the client's
// failures against servers that misbehave on purpose.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "record/envelope.h"
#include "record/keys.h"
#include "record/report.h"
#include "record/roster.h"
#include "storage/store.h"
#include "storage/txn.h"
#include "tests/tools/output_lines.h"
#include "tests/tools/run_process.h"

namespace {

using mesh::test::has_line;
using mesh::test::lines;
using mesh::test::ProcessResult;
using mesh::test::read_text;
using mesh::test::run_process;
using mesh::test::TempDir;

const std::string kMeshctl = std::string(MESHNODE_BINARY_DIR) + "/tools/meshctl/meshctl";

ProcessResult meshctl(std::vector<std::string> args) {
  args.insert(args.begin(), kMeshctl);
  return run_process(args);
}

void write_text(const std::string& path, const std::string& text) {
  std::ofstream(path) << text;
}

std::string trim(std::string s) {
  while (!s.empty() && (s.back() == '\n' || s.back() == ' ')) s.pop_back();
  return s;
}

mesh::KeyPair node_key(int n) {
  mesh::Bytes seed(32, static_cast<std::uint8_t>(n));
  return mesh::key_pair_from_seed(seed);
}

// A valid three-server roster; `mutate` may break one line of it.
std::string roster_toml(const std::string& extra_server_lines = "",
                        const std::string& country_of_a = "DE") {
  std::string text = "version = 3\n\n[[routes]]\nid = \"eu\"\nname = \"Europe\"\n";
  const char* ids[] = {"a", "b", "c"};
  const char* countries[] = {country_of_a.c_str(), "NL", "FR"};
  for (int i = 0; i < 3; ++i) {
    text += "\n[[servers]]\nid = \"" + std::string(ids[i]) + "\"\ncountry = \"" + countries[i] +
            "\"\nprobe = \"127.0.0." + std::to_string(i + 1) + ":443\"\nsni = \"" + ids[i] +
            ".example.net\"\ngossip = \"127.0.0.1:" + std::to_string(7946 + i) + "\"\nkey = \"" +
            mesh::public_key_to_hex(node_key(i + 1).public_key) + "\"\nroutes = [\"eu\"]\n";
  }
  return text + extra_server_lines;
}

struct Operator {
  std::string key_path;
  std::string public_hex;
};

Operator make_operator(const TempDir& dir) {
  Operator op{dir.file("operator.key"), ""};
  auto r = meshctl({"keygen", "--out", op.key_path});
  REQUIRE(r.exit_code == 0);
  op.public_hex = trim(r.out);
  return op;
}

}  // namespace

TEST_CASE("keygen writes a 0600 key file and prints its public key") {
  TempDir dir;
  auto r = meshctl({"keygen", "--out", dir.file("k")});
  CHECK(r.exit_code == 0);
  CHECK(trim(r.out).size() == 64);
  struct stat st {};
  REQUIRE(stat(dir.file("k").c_str(), &st) == 0);
  CHECK((st.st_mode & 0777) == 0600);
  auto loaded = mesh::load_secret_key_file(dir.file("k"));
  REQUIRE(loaded.ok());
  CHECK(mesh::public_key_to_hex(loaded->public_key()) == trim(r.out));

  SUBCASE("never overwrites an existing key") {
    auto again = meshctl({"keygen", "--out", dir.file("k")});
    CHECK(again.exit_code == 2);
    CHECK(mesh::public_key_to_hex(mesh::load_secret_key_file(dir.file("k"))->public_key()) ==
          trim(r.out));
  }
  SUBCASE("--json") {
    auto json = meshctl({"keygen", "--json", "--out", dir.file("k2")});
    CHECK(json.exit_code == 0);
    CHECK(json.out.find("\"public_key\"") != std::string::npos);
  }
}

TEST_CASE("key show prints the public key of an existing key file; refuses one that is not") {
  TempDir dir;
  auto made = meshctl({"keygen", "--out", dir.file("k")});
  REQUIRE(made.exit_code == 0);
  auto shown = meshctl({"key", "show", dir.file("k")});
  CHECK(shown.exit_code == 0);
  CHECK(shown.out == made.out);
  auto json = meshctl({"key", "show", "--json", dir.file("k")});
  CHECK(json.exit_code == 0);
  CHECK(json.out.find("\"public_key\":\"" + trim(made.out) + "\"") != std::string::npos);
  auto missing = meshctl({"key", "show", dir.file("nope")});
  CHECK(missing.exit_code == 2);
  CHECK(missing.err.find(dir.file("nope")) != std::string::npos);
  CHECK(missing.out.empty());
  REQUIRE(::chmod(dir.file("k").c_str(), 0644) == 0);
  auto exposed = meshctl({"key", "show", dir.file("k")});
  CHECK(exposed.exit_code == 2);
  CHECK(exposed.err.find("mode") != std::string::npos);
  write_text(dir.file("text"), "not a key\n");
  ::chmod(dir.file("text").c_str(), 0600);
  CHECK(meshctl({"key", "show", dir.file("text")}).exit_code == 2);
  CHECK(meshctl({"key", "show"}).exit_code == 2);
}

TEST_CASE("meshctl --version") {
  auto version = meshctl({"--version"});
  CHECK(version.exit_code == 0);
  CHECK(version.out.starts_with("meshctl 0."));
}

TEST_CASE("usage errors exit 2") {
  CHECK(meshctl({}).exit_code == 2);
  CHECK(meshctl({"frobnicate"}).exit_code == 2);
  CHECK(meshctl({"keygen"}).exit_code == 2);
  CHECK(meshctl({"roster", "sign", "x.toml"}).exit_code == 2);
  CHECK(meshctl({"roster", "show"}).exit_code == 2);
  CHECK(meshctl({"roster", "push", "x.signed"}).exit_code == 2);  // no --api
  struct Case {
    std::vector<std::string> args;
    const char* message;
  };
  const std::vector<Case> cases = {
      {{"status"}, "give --data DIR (a node's store, read-only) or --api URL --token-file FILE"},
      {{"routes", "--data", "/nonexistent", "--api", "http://127.0.0.1:4717"}, "not both"},
      {{"mesh", "--api", "http://127.0.0.1:4717"}, "--api needs --token-file FILE"},
      {{"server", "a", "--data", "/nonexistent", "--token-file", "/etc/hostname"}, "go with --api URL"},
      {{"status", "--api", "127.0.0.1:4717", "--token-file", "t"}, "give http://host:port or https://host:port"},
      {{"status", "--api", "http://127.0.0.1:99999", "--token-file", "t"}, "the port must be 1..65535"},
      {{"status", "--api", "http://h:1/v1", "--token-file", "t"}, "without a path"},
      {{"status", "--api", "http://::1:4717", "--token-file", "t"}, "IPv6 address goes in brackets"},
      {{"status", "--api", "http://127.0.0.1:4717", "--token-file", "t", "--insecure"},
       "apply to https:// URLs only"},
      {{"status", "--api", "https://127.0.0.1:4717", "--token-file", "t", "--insecure", "--cacert", "c"},
       "exclude each other"},
      {{"status", "--status", "down", "--data", "/nonexistent"}, "--status must be ok, unavailable"},
      {{"server", "--data", "/nonexistent"}, "id is required"},
  };
  for (const Case& c : cases) {
    CAPTURE(c.message);
    auto r = meshctl(c.args);
    CHECK(r.exit_code == 2);
    CHECK(r.err.find(c.message) != std::string::npos);
    CHECK(r.out.empty());
  }
}

TEST_CASE("roster sign, then show with the operator key") {
  TempDir dir;
  Operator op = make_operator(dir);
  write_text(dir.file("roster.toml"), roster_toml());
  auto sign = meshctl({"roster", "sign", "--key", op.key_path, "--out", dir.file("r.signed"),
                       dir.file("roster.toml")});
  REQUIRE(sign.exit_code == 0);
  CHECK(sign.out.find("version 3") != std::string::npos);

  auto show = meshctl({"roster", "show", "--file", dir.file("r.signed"), "--operator-key", op.public_hex});
  CHECK(show.exit_code == 0);
  CHECK(show.out.find("signature valid") != std::string::npos);
  CHECK(show.out.find("a.example.net") != std::string::npos);

  auto json = meshctl({"roster", "show", "--json", "--file", dir.file("r.signed"), "--operator-key",
                       op.public_hex});
  CHECK(json.exit_code == 0);
  CHECK(json.out.find("\"servers\"") != std::string::npos);

  SUBCASE("without --operator-key, or with an empty one, nothing is shown: exit 2") {
    for (const std::vector<std::string>& args :
         {std::vector<std::string>{"roster", "show", "--file", dir.file("r.signed")},
          std::vector<std::string>{"roster", "show", "--file", dir.file("r.signed"), "--operator-key", ""},
          std::vector<std::string>{"roster", "show", "--data", dir.file("r.signed"), "--json"}}) {
      auto r = meshctl(args);
      CHECK(r.exit_code == 2);
      CHECK(r.err.find("--operator-key HEX is required; --no-verify to show a roster without checking it") !=
            std::string::npos);
      CHECK(r.out.empty());
    }
    auto both = meshctl({"roster", "show", "--file", dir.file("r.signed"), "--no-verify", "--operator-key",
                         op.public_hex});
    CHECK(both.exit_code == 2);
  }
  SUBCASE("--no-verify: every line, and the JSON, says NOT VERIFIED") {
    auto r = meshctl({"roster", "show", "--file", dir.file("r.signed"), "--no-verify"});
    CHECK(r.exit_code == 0);
    CHECK(r.out.find("a.example.net") != std::string::npos);
    CHECK(lines(r.out).size() > 20);
    for (const std::string& line : lines(r.out)) {
      CAPTURE(line);
      CHECK(line.find("NOT VERIFIED") != std::string::npos);
    }
    CHECK(r.err.find("NOT VERIFIED") != std::string::npos);
    auto json = meshctl({"roster", "show", "--json", "--file", dir.file("r.signed"), "--no-verify"});
    CHECK(json.exit_code == 0);
    CHECK(json.out.find("\"signature\": \"NOT VERIFIED\"") != std::string::npos);
  }
  SUBCASE("another operator key fails the check: exit 1") {
    auto other = mesh::public_key_to_hex(node_key(9).public_key);
    auto r = meshctl({"roster", "show", "--file", dir.file("r.signed"), "--operator-key", other});
    CHECK(r.exit_code == 1);
    CHECK(r.err.find("signature") != std::string::npos);
  }
  SUBCASE("a tampered file fails the check: exit 1") {
    std::fstream f(dir.file("r.signed"), std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(40);
    char c = 0;
    f.read(&c, 1);
    f.seekp(40);
    c ^= 0x01;
    f.write(&c, 1);
    f.close();
    auto r = meshctl({"roster", "show", "--file", dir.file("r.signed"), "--operator-key", op.public_hex});
    CHECK(r.exit_code != 0);
  }
  SUBCASE("--version overrides the file's version") {
    auto r = meshctl({"roster", "sign", "--key", op.key_path, "--version", "9", "--out",
                      dir.file("r9.signed"), dir.file("roster.toml")});
    CHECK(r.exit_code == 0);
    CHECK(r.out.find("version 9") != std::string::npos);
  }
  SUBCASE("an existing output file is never overwritten") {
    auto r = meshctl({"roster", "sign", "--key", op.key_path, "--out", dir.file("r.signed"),
                      dir.file("roster.toml")});
    CHECK(r.exit_code == 2);
  }
}

TEST_CASE("roster sign refuses every invalid roster with a clear error and writes nothing") {
  TempDir dir;
  Operator op = make_operator(dir);
  std::string dup = "\n[[servers]]\nid = \"a\"\ncountry = \"DE\"\nprobe = \"127.0.0.9:443\"\n"
                    "sni = \"x.example.net\"\ngossip = \"127.0.0.1:7999\"\nkey = \"" +
                    mesh::public_key_to_hex(node_key(7).public_key) + "\"\nroutes = [\"eu\"]\n";
  struct Case {
    const char* name;
    std::string text;
    const char* message;
  };
  std::string good = roster_toml();
  auto replace = [&](const std::string& from, const std::string& to) {
    std::string t = good;
    t.replace(t.find(from), from.size(), to);
    return t;
  };
  std::vector<Case> cases = {
      {"duplicate id", roster_toml(dup), "'a'"},
      {"bad country", roster_toml("", "XX"), "XX"},
      {"unknown route", replace("routes = [\"eu\"]", "routes = [\"asia\"]"), "asia"},
      {"bad address", replace("127.0.0.1:7946", "127.0.0.1:99999"), "gossip"},
      {"missing key", replace("key = \"" + mesh::public_key_to_hex(node_key(1).public_key) + "\"\n", ""),
       "key"},
      {"not toml", "version = = 1", ""},
      {"unknown field", replace("sni =", "snii = \"x\"\nsni ="), "snii"},
      {"a parameter's old name", good + "\n[params]\nreport_interval_ms = 60000\n",
       "unknown key 'report_interval_ms' in [params] (renamed 'heartbeat_interval_ms')"},
  };
  for (const Case& c : cases) {
    CAPTURE(c.name);
    write_text(dir.file("bad.toml"), c.text);
    auto r = meshctl({"roster", "sign", "--key", op.key_path, "--out", dir.file("bad.signed"),
                      dir.file("bad.toml")});
    CHECK(r.exit_code == 2);
    CHECK(r.err.find(c.message) != std::string::npos);
    CHECK_FALSE(std::filesystem::exists(dir.file("bad.signed")));
  }
}

TEST_CASE("roster sign refuses a key file that others can read") {
  TempDir dir;
  Operator op = make_operator(dir);
  chmod(op.key_path.c_str(), 0644);
  write_text(dir.file("roster.toml"), roster_toml());
  auto r = meshctl({"roster", "sign", "--key", op.key_path, "--out", dir.file("r.signed"),
                    dir.file("roster.toml")});
  CHECK(r.exit_code == 2);
  CHECK(r.err.find(op.key_path) != std::string::npos);
  CHECK_FALSE(std::filesystem::exists(dir.file("r.signed")));
}

TEST_CASE("roster sign reads a roster file up to the documented 8 MiB, no more") {
  TempDir dir;
  Operator op = make_operator(dir);
  // Comments pad the file: 5 MiB was over the old 4 MiB limit, under docs/CONFIG.md's 8 MiB.
  const std::string comment = "# " + std::string(1022, 'x') + "\n";
  std::string text = roster_toml();
  while (text.size() < 5 * 1024 * 1024) text += comment;
  write_text(dir.file("big.toml"), text);
  auto r = meshctl({"roster", "sign", "--key", op.key_path, "--out", dir.file("big.signed"), dir.file("big.toml")});
  CHECK(r.exit_code == 0);
  while (text.size() <= 8 * 1024 * 1024) text += comment;
  write_text(dir.file("huge.toml"), text);
  auto huge = meshctl({"roster", "sign", "--key", op.key_path, "--out", dir.file("huge.signed"), dir.file("huge.toml")});
  CHECK(huge.exit_code == 2);
  CHECK(huge.err.find("is over 8388608 bytes") != std::string::npos);
  CHECK_FALSE(std::filesystem::exists(dir.file("huge.signed")));
}

TEST_CASE("a FIFO or a directory given as a file is refused at once, not read") {
  TempDir dir;
  Operator op = make_operator(dir);
  REQUIRE(::mkfifo(dir.file("fifo").c_str(), 0600) == 0);
  auto sign = meshctl({"roster", "sign", "--key", op.key_path, "--out", dir.file("r.signed"), dir.file("fifo")});
  CHECK(sign.exit_code == 2);
  CHECK(sign.err.find("'" + dir.file("fifo") + "' is a FIFO, not a regular file") != std::string::npos);
  CHECK_FALSE(std::filesystem::exists(dir.file("r.signed")));
  auto show = meshctl({"roster", "show", "--file", dir.file("fifo"), "--operator-key", op.public_hex});
  CHECK(show.exit_code == 2);
  CHECK(show.err.find("is a FIFO, not a regular file") != std::string::npos);
  auto directory = meshctl({"roster", "show", "--file", dir.path(), "--no-verify"});
  CHECK(directory.exit_code == 2);
  CHECK(directory.err.find("is a directory, not a regular file") != std::string::npos);
  auto token = meshctl({"status", "--api", "http://127.0.0.1:1", "--token-file", dir.file("fifo")});
  CHECK(token.exit_code == 2);
  CHECK(token.err.find("--token-file: '" + dir.file("fifo") + "' is a FIFO") != std::string::npos);
}

TEST_CASE("a roster field over the decoder's limit is named") {
  TempDir dir;
  Operator op = make_operator(dir);
  write_text(dir.file("roster.toml"), roster_toml());
  REQUIRE(meshctl({"roster", "sign", "--key", op.key_path, "--out", dir.file("r.signed"), dir.file("roster.toml")})
              .exit_code == 0);
  const std::string good = read_text(dir.file("r.signed"));
  auto envelope = mesh::decode_envelope(mesh::as_bytes(good));
  REQUIRE(envelope.ok());
  mesh::Roster roster = mesh::decode_roster_payload(envelope->payload, envelope->seq).value();
  roster.servers[1].sni = std::string(300, 's');  // over the 253-byte limit of every string
  auto key = mesh::load_secret_key_file(op.key_path);
  REQUIRE(key.ok());
  const mesh::Bytes raw = mesh::encode_signed_record(mesh::RecordKind::roster, mesh::kOperatorOrigin, 4,
                                                     1'700'000'000'000, mesh::encode_roster_payload(roster), *key);
  write_text(dir.file("long.signed"), std::string(raw.begin(), raw.end()));
  auto r = meshctl({"roster", "show", "--file", dir.file("long.signed"), "--operator-key", op.public_hex});
  CHECK(r.exit_code == 2);
  CHECK(r.err.find("roster payload: servers[1] sni: a string over 253 bytes") != std::string::npos);
  CHECK(r.out.empty());
}

namespace {

// A store holding a signed roster and one report from each server; the
// report of server `bad` (if any) is signed with the wrong key. Server b's
// report carries metrics.
void fill_store(const TempDir& dir, const Operator& op, int bad = -1) {
  write_text(dir.file("roster.toml"), roster_toml());
  auto sign = meshctl({"roster", "sign", "--key", op.key_path, "--out", dir.file("r.signed"),
                       dir.file("roster.toml")});
  REQUIRE(sign.exit_code == 0);
  const std::string roster_text = read_text(dir.file("r.signed"));
  const mesh::Bytes roster_raw(roster_text.begin(), roster_text.end());
  auto envelope = mesh::decode_envelope(roster_raw);
  REQUIRE(envelope.ok());
  auto roster = mesh::decode_roster_payload(envelope->payload, envelope->seq);
  REQUIRE(roster.ok());

  auto store = mesh::Store::open(dir.file("data"), {});
  REQUIRE(store.ok());
  auto txn = (*store)->begin_write();
  REQUIRE(txn.ok());
  REQUIRE(txn->put_roster(roster_raw).ok());
  const mesh::UnixMs ts = 1'700'000'000'000;
  for (std::uint32_t i = 0; i < 3; ++i) {
    mesh::Report report;
    report.view.roster_version = roster->version;
    for (std::uint32_t t = 0; t < 3; ++t) {
      if (t == i) continue;
      report.view.results.push_back({t, 0, 5, ts - 1000, ts - 1000, mesh::ProbeFailure::none});
    }
    if (i == 1) report.metrics = {230, 1048576, 4194304, 10240, 81920, 120000, 98000, 310, 90061, 152};
    auto payload = mesh::encode_report_payload(report, ts);
    auto key = node_key(static_cast<int>(i) == bad ? 42 : static_cast<int>(i) + 1).secret_key;
    auto raw = mesh::encode_signed_record(mesh::RecordKind::report, roster->servers[i].id, 1, ts,
                                          payload, key);
    REQUIRE(txn->put_record(static_cast<std::uint8_t>(mesh::RecordKind::report),
                            roster->servers[i].id, raw)
                .ok());
  }
  REQUIRE(txn->commit().ok());
}

// Runs `fn` on a write transaction of the store of fill_store().
template <class Fn>
void write_store(const TempDir& dir, Fn&& fn) {
  auto store = mesh::Store::open(dir.file("data"), {});
  REQUIRE(store.ok());
  auto txn = (*store)->begin_write();
  REQUIRE(txn.ok());
  fn(*txn);
  REQUIRE(txn->commit().ok());
}

void put_state(const TempDir& dir, const std::string& key, const std::string& value) {
  write_store(dir, [&](mesh::WriteTxn& txn) { REQUIRE(txn.put_state(key, mesh::as_bytes(value)).ok()); });
}

mesh::Bytes stored_record(const TempDir& dir, std::uint8_t kind, const std::string& origin) {
  mesh::Bytes out;
  mesh::StoreOptions options;
  options.read_only = true;
  auto store = mesh::Store::open(dir.file("data"), options);
  REQUIRE(store.ok());
  auto txn = (*store)->begin_read();
  REQUIRE(txn.ok());
  REQUIRE(txn->for_each_record([&](std::uint8_t k, std::string_view o, mesh::ByteView raw) {
    if (k == kind && o == origin) out.assign(raw.begin(), raw.end());
  }).ok());
  return out;
}

// The store's data file: a read-only command must leave it as it was.
std::string data_file(const TempDir& dir) { return read_text(dir.file("data") + "/data.mdb"); }

}  // namespace

TEST_CASE("records lists and verifies a store read-only") {
  TempDir dir;
  Operator op = make_operator(dir);
  fill_store(dir, op);
  const std::string before = data_file(dir);
  auto list = meshctl({"records", "--data", dir.file("data")});
  CHECK(list.exit_code == 0);
  CHECK(list.out.find("report") != std::string::npos);
  CHECK(lines(list.out)[1].rfind("roster  operator  3 ", 0) == 0);  // the roster first
  auto verify = meshctl({"records", "--verify", "--json", "--operator-key", op.public_hex, "--data",
                         dir.file("data")});
  CHECK(verify.exit_code == 0);
  CHECK(verify.out.find("\"check\": \"ok\"") != std::string::npos);
  CHECK(verify.out.find("unchecked") == std::string::npos);
  auto shown = meshctl({"roster", "show", "--data", dir.file("data"), "--operator-key", op.public_hex});
  CHECK(shown.exit_code == 0);
  CHECK(shown.out.find("version 3") != std::string::npos);
  CHECK(data_file(dir) == before);
}

TEST_CASE("records --verify exits 1 on a record signed with the wrong key") {
  TempDir dir;
  Operator op = make_operator(dir);
  fill_store(dir, op, /*bad=*/1);
  auto verify = meshctl({"records", "--verify", "--operator-key", op.public_hex, "--data", dir.file("data")});
  CHECK(verify.exit_code == 1);
  CHECK(verify.out.find("signature of seq 1 from 'b' does not verify") != std::string::npos);
}

TEST_CASE("records --verify never passes what it did not check") {
  TempDir dir;
  Operator op = make_operator(dir);
  fill_store(dir, op);

  SUBCASE("without --operator-key it refuses to check reports against an unverified roster") {
    auto r = meshctl({"records", "--verify", "--data", dir.file("data")});
    CHECK(r.exit_code == 2);
    CHECK(r.err.find("--verify needs --operator-key HEX") != std::string::npos);
    CHECK(r.out.empty());
    CHECK(meshctl({"records", "--verify", "--operator-key", "", "--data", dir.file("data")}).exit_code == 2);
  }
  // Each case below writes the store first; meshctl then only reads it.
  SUBCASE("a roster signed by another key fails, and so does every report checked against it") {
    const auto other = mesh::public_key_to_hex(node_key(9).public_key);
    const std::string before = data_file(dir);
    auto r = meshctl({"records", "--verify", "--operator-key", other, "--data", dir.file("data")});
    CHECK(data_file(dir) == before);
    CHECK(r.exit_code == 1);
    CHECK(r.out.find("roster signature check failed") != std::string::npos);
    CHECK(r.out.find("cannot check: the roster does not verify") != std::string::npos);
    CHECK(r.out.find("  ok\n") == std::string::npos);
  }
  SUBCASE("a roster record among the records is verified against the operator key") {
    const std::string roster_text = read_text(dir.file("r.signed"));
    mesh::Bytes forged(roster_text.begin(), roster_text.end());
    std::fill(forged.end() - 64, forged.end(), 0);  // a zeroed signature
    write_store(dir, [&](mesh::WriteTxn& txn) { REQUIRE(txn.put_record(1, "operator", forged).ok()); });
    const std::string before = data_file(dir);
    auto r = meshctl({"records", "--verify", "--operator-key", op.public_hex, "--data", dir.file("data")});
    CHECK(r.exit_code == 1);
    CHECK(r.out.find("operator record: signature of seq 3 from 'operator' does not verify") != std::string::npos);
    CHECK(r.out.find("the roster itself") == std::string::npos);
    CHECK(data_file(dir) == before);
  }
  SUBCASE("a valid report stored under another server's key fails the check") {
    const mesh::Bytes of_a = stored_record(dir, 2, "a");
    write_store(dir, [&](mesh::WriteTxn& txn) { REQUIRE(txn.put_record(2, "b", of_a).ok()); });
    const std::string before = data_file(dir);
    auto r = meshctl({"records", "--verify", "--operator-key", op.public_hex, "--data", dir.file("data")});
    CHECK(r.exit_code == 1);
    CHECK(r.out.find("stored under 'b' but signed as 'a'") != std::string::npos);
    CHECK(data_file(dir) == before);
  }
}

TEST_CASE("meshctl names what is wrong: a recovered bitmap over 512 bytes, a roster payload sent as a map") {
  TempDir dir;
  Operator op = make_operator(dir);
  fill_store(dir, op);
  // b's report (index 1, roster version 3): targets 0 and 2 ok, and a
  // sixth view element, the recovered bitmap, of 513 bytes.
  mesh::Bytes payload{0x93, 0x93, 0xc3, 0xc3, 0xa0, 0x9a, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
                      0x96, 0x03, 0xc4, 0x01, 0x05, 0x05, 0xcd, 0x03, 0xe8, 0x90, 0xc5, 0x02, 0x01};
  payload.insert(payload.end(), 513, 0x01);
  const mesh::Bytes report = mesh::encode_signed_record(mesh::RecordKind::report, "b", 2, 1'700'000'000'000,
                                                        payload, node_key(2).secret_key);
  write_store(dir, [&](mesh::WriteTxn& txn) { REQUIRE(txn.put_record(2, "b", report).ok()); });
  auto verify = meshctl({"records", "--verify", "--operator-key", op.public_hex, "--data", dir.file("data")});
  CHECK(verify.exit_code == 1);
  CHECK(verify.out.find("view.recovered: longer than 512 bytes") != std::string::npos);
  CHECK(verify.out.find("ok_bitmap") == std::string::npos);

  // A roster whose payload is a msgpack map ({"a": 1}), correctly signed.
  auto key = mesh::load_secret_key_file(op.key_path);
  REQUIRE(key.ok());
  const mesh::Bytes map = mesh::encode_signed_record(mesh::RecordKind::roster, mesh::kOperatorOrigin, 4,
                                                     1'700'000'000'000, mesh::Bytes{0x81, 0xa1, 'a', 0x01}, *key);
  write_text(dir.file("map.signed"), std::string(map.begin(), map.end()));
  auto show = meshctl({"roster", "show", "--file", dir.file("map.signed"), "--operator-key", op.public_hex});
  CHECK(show.exit_code == 2);
  CHECK(show.err.find("malformed: a map where the layout has an array") != std::string::npos);
  CHECK(show.err.find("over its limit") == std::string::npos);
}

TEST_CASE("records on a directory without a store exits 2 and creates nothing") {
  TempDir dir;
  auto r = meshctl({"records", "--data", dir.file("nothing")});
  CHECK(r.exit_code == 2);
  CHECK(r.err.find(dir.file("nothing")) != std::string::npos);
  CHECK_FALSE(std::filesystem::exists(dir.file("nothing")));
}

TEST_CASE("an empty or foreign data.mdb is not a meshnode store: exit 2, nothing written") {
  TempDir dir;
  ::mkdir(dir.file("data").c_str(), 0700);
  write_text(dir.file("data") + "/data.mdb", "");
  for (const char* command : {"records", "status", "mesh"}) {
    CAPTURE(command);
    auto r = meshctl({command, "--data", dir.file("data")});
    CHECK(r.exit_code == 2);
    CHECK(r.err.find("'" + dir.file("data") + "' is not a meshnode store: its data.mdb is empty") !=
          std::string::npos);
    CHECK(r.err.find("Bad file descriptor") == std::string::npos);
  }
  write_text(dir.file("data") + "/data.mdb", std::string(8192, 'x'));
  auto foreign = meshctl({"roster", "show", "--data", dir.file("data"), "--no-verify"});
  CHECK(foreign.exit_code == 2);
  CHECK(foreign.err.find("is not a meshnode store: its data.mdb is not an LMDB file") != std::string::npos);
  CHECK(read_text(dir.file("data") + "/data.mdb") == std::string(8192, 'x'));
  CHECK_FALSE(std::filesystem::exists(dir.file("data") + "/lock.mdb"));
}

namespace {

// The daemon's verdict snapshot for the store of fill_store(): b is
// unreachable from FR and NL, route eu holds a and c.
const char* kVerdicts =
    R"J({"epoch":0,"grace":false,"now_ms":1700000000000,"reports_ignored":0,"roster_version":3,)J"
    R"J("routes":[{"degraded":false,"degraded_reason":"","id":"eu","members":["a","c"]}],"servers":[)J"
    R"J({"badges":[],"by_country":[],"caption":"","discarded":0,"eligible":2,"failing":0,"flags":[],)J"
    R"J("id":"a","last_report_ms":1700000000000,"missing":0,"quorum":2,"self_check_reason":"","status":"ok"},)J"
    R"J({"badges":[],"by_country":[{"country":"DE","eligible":1,"failing":1,"missing":0},)J"
    R"J({"country":"FR","eligible":1,"failing":1,"missing":0}],)J"
    R"J("caption":"Unreachable from your servers (2 of 2 servers can't see it)","discarded":0,"eligible":2,)J"
    R"J("failing":2,"flags":["unreachable"],"id":"b","last_report_ms":1700000000000,"missing":0,"quorum":2,)J"
    R"J("self_check_reason":"","status":"unreachable"},)J"
    R"J({"badges":[],"by_country":[],"caption":"","discarded":0,"eligible":2,"failing":0,"flags":[],)J"
    R"J("id":"c","last_report_ms":1700000000000,"missing":0,"quorum":2,"self_check_reason":"","status":"ok"}],)J"
    R"J("unreliable_observers":["c"]})J";

}  // namespace

TEST_CASE("status, routes and server from a store: the daemon's verdicts, the roster, the reports") {
  TempDir dir;
  Operator op = make_operator(dir);
  fill_store(dir, op);
  const std::string data = dir.file("data");
  auto none = meshctl({"status", "--data", data});
  CHECK(none.exit_code == 1);
  CHECK(none.err.find("holds no verdicts yet") != std::string::npos);
  put_state(dir, "agent/verdicts", kVerdicts);
  const std::string before = data_file(dir);

  auto shown = meshctl({"status", "--data", data});
  CHECK(shown.exit_code == 0);
  CHECK(lines(shown.out) ==
        std::vector<std::string>{
            "SERVER  COUNTRY  STATUS       FAILING WITNESSES  CAPTION",
            "a       DE       ok           -",
            "b       NL       unreachable  DE 1/1 FR 1/1      Unreachable from your servers (2 of 2 servers can't see it)",
            "c       FR       ok           -"});
  auto filtered = meshctl({"status", "--data", data, "--status", "unreachable", "--country", "nl", "--route", "eu"});
  CHECK(lines(filtered.out).size() == 2);
  CHECK(lines(filtered.out)[1].rfind("b       NL", 0) == 0);
  auto empty = meshctl({"status", "--data", data, "--route", "asia"});
  CHECK(empty.exit_code == 0);
  CHECK(lines(empty.out) == std::vector<std::string>{"SERVER  COUNTRY  STATUS  FAILING WITNESSES  CAPTION"});
  auto json = meshctl({"status", "--json", "--data", data});
  CHECK(json.exit_code == 0);
  CHECK(json.out.find("\"status\": \"unreachable\"") != std::string::npos);
  CHECK(json.out.find("\"by_country\": {") != std::string::npos);  // the API's shape

  auto routes = meshctl({"routes", "--data", data});
  CHECK(routes.exit_code == 0);
  CHECK(lines(routes.out) == std::vector<std::string>{"ROUTE  NAME    DEGRADED  IN ROTATION  REASON",
                                                       "eu     Europe  no        a, c"});
  // Per user country: b's witnesses each stand alone in DE and FR (1/1):
  // no country fails or reaches it outright, so users anywhere get a and c.
  auto for_de = meshctl({"routes", "--data", data, "--country", "DE", "--json"});
  CHECK(for_de.exit_code == 0);
  CHECK(for_de.out.find("\"country\": \"DE\"") != std::string::npos);
  CHECK(for_de.out.find("\"servers\": [\n      \"a\",\n      \"c\"\n    ]") != std::string::npos);
  auto lower = meshctl({"routes", "--data", data, "--country", "de"});
  CHECK(lower.exit_code == 2);
  CHECK(lower.err.find("ISO 3166-1 alpha-2") != std::string::npos);

  auto b = meshctl({"server", "b", "--data", data});
  CHECK(b.exit_code == 0);
  for (const char* line :
       {"server      b (NL), routes eu",
        "status      unreachable: Unreachable from your servers (2 of 2 servers can't see it)",
        "flags       unreachable", "witnesses   2 of 2 failing (DE 1/1, FR 1/1)",
        "self-check  listener ok, service ok",
        "metrics     cpu 23.0%, load 0.310, memory 1024/4096 MiB, disk 10240/81920 MiB, net rx 120000 tx "
        "98000 B/s, up 1d 1h 1m, 152 connections",
        "OBSERVER  COUNTRY  STREAK  LAST REASON  TCP  TLS      LAST PROBE  VOTE"}) {
    CHECK_MESSAGE(has_line(b.out, line), line);
  }
  CHECK(b.out.find("\na         DE       ok 5    none         ok   unknown  ") != std::string::npos);
  CHECK(b.out.find("counted\nc         FR       ok 5    none         ok   unknown  ") != std::string::npos);
  CHECK(b.out.find("  discarded (unreliable)\n") != std::string::npos);
  auto b_json = meshctl({"server", "b", "--json", "--data", data});
  CHECK(b_json.out.find("\"last_reason\": \"none\"") != std::string::npos);
  CHECK(b_json.out.find("\"cpu_permille\": 230") != std::string::npos);
  auto unknown = meshctl({"server", "zz", "--data", data});
  CHECK(unknown.exit_code == 2);
  CHECK(unknown.err.find("no server 'zz'") != std::string::npos);
  CHECK(data_file(dir) == before);

  SUBCASE("stored verdicts of another roster version, or not a snapshot") {
    std::string old = kVerdicts;
    old.replace(old.find("\"roster_version\":3"), 18, "\"roster_version\":2");
    put_state(dir, "agent/verdicts", old);
    auto stale = meshctl({"status", "--data", data});
    CHECK(stale.exit_code == 1);
    CHECK(stale.err.find("the stored verdicts are of roster version 2") != std::string::npos);
    put_state(dir, "agent/verdicts", "{\"servers\": 7");
    auto broken = meshctl({"routes", "--data", data});
    CHECK(broken.exit_code == 2);
    CHECK(broken.err.find("not a verdict snapshot") != std::string::npos);
    put_state(dir, "agent/verdicts", R"({"servers": [{"id": 5}]})");
    auto wrong = meshctl({"server", "a", "--data", data});
    CHECK(wrong.exit_code == 2);
    CHECK(wrong.err.find("not a verdict snapshot") != std::string::npos);
  }
}

TEST_CASE("colour only on a terminal, never with --no-color") {
  TempDir dir;
  Operator op = make_operator(dir);
  fill_store(dir, op);
  put_state(dir, "agent/verdicts", kVerdicts);
  // script(1) gives meshctl a terminal as stdout.
  auto on_tty = run_process({"/usr/bin/script", "-qec", kMeshctl + " status --data " + dir.file("data"), "/dev/null"});
  CHECK(on_tty.exit_code == 0);
  CHECK(on_tty.out.find("\033[33munreachable\033[0m") != std::string::npos);
  auto off = run_process(
      {"/usr/bin/script", "-qec", kMeshctl + " status --no-color --data " + dir.file("data"), "/dev/null"});
  CHECK(off.out.find('\033') == std::string::npos);
  CHECK(off.out.find("unreachable") != std::string::npos);
}

TEST_CASE("mesh shows the node's roster version, reports and volume account") {
  TempDir dir;
  Operator op = make_operator(dir);
  fill_store(dir, op);
  auto shown = meshctl({"mesh", "--json", "--data", dir.file("data")});
  CHECK(shown.exit_code == 0);
  CHECK(shown.out.find("\"roster_version\": 3") != std::string::npos);
  CHECK(shown.out.find("\"reports\": 3") != std::string::npos);
  CHECK(shown.out.find("\"records\": 4") != std::string::npos);
  CHECK(shown.out.find("\"cap\": 209715200") != std::string::npos);
  auto text = meshctl({"mesh", "--data", dir.file("data")});
  CHECK(has_line(text.out, "node ?, roster version 3, 3 reports held, boot ?"));
  auto missing = meshctl({"mesh", "--data", dir.file("nothing")});
  CHECK(missing.exit_code == 2);
}

namespace {

// An HTTP server on 127.0.0.1 that answers every request with the same
// bytes (a status meshd never sends, a body over the limit, nothing), so
// that each failure of meshctl's API client shows its message.
class CannedServer {
 public:
  explicit CannedServer(std::string response) : response_(std::move(response)) {
    fd_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t size = sizeof address;
    REQUIRE(::bind(fd_, reinterpret_cast<sockaddr*>(&address), size) == 0);
    REQUIRE(::listen(fd_, 8) == 0);
    REQUIRE(::getsockname(fd_, reinterpret_cast<sockaddr*>(&address), &size) == 0);
    port_ = ntohs(address.sin_port);
    thread_ = std::thread([this] { serve(); });
  }
  ~CannedServer() {
    ::shutdown(fd_, SHUT_RDWR);  // wakes accept()
    thread_.join();
    ::close(fd_);
  }
  std::string url() const { return "http://127.0.0.1:" + std::to_string(port_); }

 private:
  void serve() {
    for (;;) {
      const int client = ::accept(fd_, nullptr, nullptr);
      if (client < 0) return;
      std::string request;
      char buffer[4096];
      while (request.find("\r\n\r\n") == std::string::npos && request.size() < 65536) {
        const ssize_t n = ::read(client, buffer, sizeof buffer);
        if (n <= 0) break;
        request.append(buffer, static_cast<std::size_t>(n));
      }
      for (std::size_t done = 0; done < response_.size();) {
        const ssize_t n = ::send(client, response_.data() + done, response_.size() - done, MSG_NOSIGNAL);
        if (n <= 0) break;
        done += static_cast<std::size_t>(n);
      }
      ::close(client);
    }
  }

  std::string response_;
  int fd_ = -1;
  std::uint16_t port_ = 0;
  std::thread thread_;
};

std::string http_answer(const std::string& status, const std::string& body) {
  return "HTTP/1.1 " + status + "\r\nContent-Type: application/json\r\nContent-Length: " +
         std::to_string(body.size()) + "\r\nConnection: close\r\n\r\n" + body;
}

}  // namespace

TEST_CASE("the API client: every failure names the URL and what failed") {
  TempDir dir;
  write_text(dir.file("token"), "0123456789abcdef\n");
  auto routes = [&](const CannedServer& server) {
    return meshctl({"routes", "--api", server.url(), "--token-file", dir.file("token")});
  };
  struct Case {
    const char* name;
    std::string response;
    int exit_code;
    std::string message;
  };
  const std::vector<Case> cases = {
      {"server error", http_answer("500 Internal Server Error", R"({"error":"internal","message":"boom"})"), 2,
       "/v1/routes: 500 server error: boom"},
      {"no verdict yet", http_answer("503 Service Unavailable",
                                     R"({"error":"no_roster","message":"this node holds no roster or no verdict yet"})"),
       1, "/v1/routes: 503: this node holds no roster or no verdict yet"},
      {"forbidden", http_answer("403 Forbidden", R"({"error":"forbidden","message":"this needs an admin token"})"), 2,
       "/v1/routes: 403: the token's role may not do this: this needs an admin token"},
      {"unauthorized", http_answer("401 Unauthorized", R"({"error":"unauthorized"})"), 2,
       "/v1/routes: 401: the token is not accepted (token file '" + dir.file("token") + "')"},
      {"not JSON", http_answer("200 OK", "<html>"), 2, "/v1/routes: the answer is not JSON"},
      {"not the layout", http_answer("200 OK", R"([{"id": 5}])"), 2, "the answer is not the documented layout"},
      {"over the body limit", "HTTP/1.1 200 OK\r\nContent-Length: 17000000\r\n\r\n[", 2,
       "/v1/routes: the answer is over 16777216 bytes"},
      {"closed", "", 2, "/v1/routes: the connection closed before an answer (is the API https://?)"},
  };
  for (const Case& c : cases) {
    CAPTURE(c.name);
    CannedServer server(c.response);
    auto r = routes(server);
    CHECK(r.exit_code == c.exit_code);
    CHECK(r.err.find(c.message) != std::string::npos);
  }
  SUBCASE("nothing listening") {
    auto r = meshctl({"status", "--api", "http://127.0.0.1:1", "--token-file", dir.file("token")});
    CHECK(r.exit_code == 2);
    CHECK(r.err.find("http://127.0.0.1:1/v1/servers: connection refused") != std::string::npos);
  }
  SUBCASE("a token file without a token") {
    write_text(dir.file("empty"), "\n");
    auto r = meshctl({"status", "--api", "http://127.0.0.1:1", "--token-file", dir.file("empty")});
    CHECK(r.exit_code == 2);
    CHECK(r.err.find("its first line holds no token") != std::string::npos);
  }
  SUBCASE("plain http to another host says the token crosses in clear") {
    auto r = meshctl({"status", "--api", "http://192.0.2.1:4717", "--token-file", dir.file("token")});
    CHECK(r.exit_code == 2);
    CHECK(r.err.find("warning: plain http:// to http://192.0.2.1:4717: the token crosses the network in clear") !=
          std::string::npos);
    CHECK(r.err.find("http://192.0.2.1:4717/v1/servers: ") != std::string::npos);
  }
}

// meshctl as an operator runs it: a real process, real key files, a real
// LMDB store. Every bad input shows its exit code and message, and writes
// nothing.
#include <sys/stat.h>

#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "record/envelope.h"
#include "record/keys.h"
#include "record/report.h"
#include "record/roster.h"
#include "storage/store.h"
#include "storage/txn.h"
#include "tests/tools/run_process.h"

namespace {

using mesh::test::ProcessResult;
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

TEST_CASE("usage errors exit 2") {
  CHECK(meshctl({}).exit_code == 2);
  CHECK(meshctl({"frobnicate"}).exit_code == 2);
  CHECK(meshctl({"keygen"}).exit_code == 2);
  CHECK(meshctl({"roster", "sign", "x.toml"}).exit_code == 2);
  CHECK(meshctl({"roster", "show"}).exit_code == 2);
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

namespace {

// A store holding a signed roster and one report from each server; the
// report of server `bad` (if any) is signed with the wrong key.
void fill_store(const TempDir& dir, const Operator& op, int bad = -1) {
  write_text(dir.file("roster.toml"), roster_toml());
  auto sign = meshctl({"roster", "sign", "--key", op.key_path, "--out", dir.file("r.signed"),
                       dir.file("roster.toml")});
  REQUIRE(sign.exit_code == 0);
  std::ifstream in(dir.file("r.signed"), std::ios::binary);
  mesh::Bytes roster_raw((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
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

}  // namespace

TEST_CASE("records lists and verifies a store read-only") {
  TempDir dir;
  Operator op = make_operator(dir);
  fill_store(dir, op);
  auto list = meshctl({"records", "--data", dir.file("data")});
  CHECK(list.exit_code == 0);
  CHECK(list.out.find("report") != std::string::npos);
  auto verify = meshctl({"records", "--verify", "--json", "--operator-key", op.public_hex, "--data",
                         dir.file("data")});
  CHECK(verify.exit_code == 0);
  CHECK(verify.out.find("\"check\": \"ok\"") != std::string::npos);
  auto shown = meshctl({"roster", "show", "--data", dir.file("data"), "--operator-key", op.public_hex});
  CHECK(shown.exit_code == 0);
  CHECK(shown.out.find("version 3") != std::string::npos);
}

TEST_CASE("records --verify exits 1 on a record signed with the wrong key") {
  TempDir dir;
  Operator op = make_operator(dir);
  fill_store(dir, op, /*bad=*/1);
  auto verify = meshctl({"records", "--verify", "--data", dir.file("data")});
  CHECK(verify.exit_code == 1);
  CHECK(verify.out.find("signature") != std::string::npos);
}

TEST_CASE("records on a directory without a store exits 2 and creates nothing") {
  TempDir dir;
  auto r = meshctl({"records", "--data", dir.file("nothing")});
  CHECK(r.exit_code == 2);
  CHECK(r.err.find(dir.file("nothing")) != std::string::npos);
  CHECK_FALSE(std::filesystem::exists(dir.file("nothing")));
}

namespace {

// Puts a state value into the store of fill_store().
void put_state(const TempDir& dir, const std::string& key, const std::string& value) {
  auto store = mesh::Store::open(dir.file("data"), {});
  REQUIRE(store.ok());
  auto txn = (*store)->begin_write();
  REQUIRE(txn.ok());
  REQUIRE(txn->put_state(key, mesh::as_bytes(value)).ok());
  REQUIRE(txn->commit().ok());
}

}  // namespace

TEST_CASE("status shows the verdicts the daemon stored, with countries from the roster") {
  TempDir dir;
  Operator op = make_operator(dir);
  fill_store(dir, op);
  auto none = meshctl({"status", "--data", dir.file("data")});
  CHECK(none.exit_code == 1);
  CHECK(none.err.find("holds no verdicts yet") != std::string::npos);
  put_state(dir, "agent/verdicts",
            R"J({"epoch":0,"grace":false,"now_ms":1700000000000,"reports_ignored":0,"roster_version":3,)J"
            R"J("routes":[{"degraded":false,"degraded_reason":"","id":"eu","members":["a","c"]}],)J"
            R"J("servers":[{"badges":[],"by_country":[{"country":"FR","eligible":1,"failing":1,"missing":0},)J"
            R"J({"country":"NL","eligible":1,"failing":1,"missing":0}],"caption":"Unreachable from your servers (2 of 2 servers can't see it)",)J"
            R"J("discarded":0,"eligible":2,"failing":2,"flags":["unreachable"],"id":"b","last_report_ms":1700000000000,)J"
            R"J("missing":0,"quorum":2,"self_check_reason":"","status":"unreachable"}],"unreliable_observers":[]})J");
  auto shown = meshctl({"status", "--data", dir.file("data")});
  CHECK(shown.exit_code == 0);
  CHECK(shown.out.find("b                NL      unreachable  FR 1/1 NL 1/1") != std::string::npos);
  CHECK(shown.out.find("eu               no        a, c") != std::string::npos);
  CHECK(shown.out.find("2023-11-14T22:13:20Z") != std::string::npos);
  auto json = meshctl({"status", "--json", "--data", dir.file("data")});
  CHECK(json.exit_code == 0);
  CHECK(json.out.find("\"status\": \"unreachable\"") != std::string::npos);
  put_state(dir, "agent/verdicts", "{\"servers\": 7");
  auto broken = meshctl({"status", "--data", dir.file("data")});
  CHECK(broken.exit_code == 2);
  CHECK(broken.err.find("not a verdict snapshot") != std::string::npos);
  put_state(dir, "agent/verdicts", R"({"servers": [{"id": 5}]})");
  auto wrong = meshctl({"status", "--data", dir.file("data")});
  CHECK(wrong.exit_code == 2);
  CHECK(wrong.err.find("not the documented layout") != std::string::npos);
}

TEST_CASE("mesh shows the node's roster version, reports and volume account") {
  TempDir dir;
  Operator op = make_operator(dir);
  fill_store(dir, op);
  auto shown = meshctl({"mesh", "--json", "--data", dir.file("data")});
  CHECK(shown.exit_code == 0);
  CHECK(shown.out.find("\"roster_version\": 3") != std::string::npos);
  CHECK(shown.out.find("\"reports\": 3") != std::string::npos);
  CHECK(shown.out.find("\"cap\": 209715200") != std::string::npos);
  auto missing = meshctl({"mesh", "--data", dir.file("nothing")});
  CHECK(missing.exit_code == 2);
}

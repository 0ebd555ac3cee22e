// A roster record checked as the node accepts one, and the words it says
// when it refuses one (node/roster_check.h): a wrong key told apart from a
// damaged file as far as the bytes allow, and what they cannot tell apart
// said as such. Keys from fixed seeds: every run checks the same bytes.
#include <doctest/doctest.h>

#include <algorithm>

#include "node/roster_check.h"
#include "record/envelope.h"

namespace mesh::node {
namespace {

KeyPair key(std::uint8_t seed) {
  const Bytes bytes(32, seed);
  return key_pair_from_seed(bytes);
}

Roster two_servers() {
  Roster roster;
  roster.version = 5;
  roster.routes = {Route{"eu", "Europe"}};
  const char* ids[] = {"n1", "n2"};
  const char* countries[] = {"DE", "NZ"};
  for (int i = 0; i < 2; ++i) {
    ServerEntry server;
    server.id = ids[i];
    server.country = countries[i];
    server.probe = Endpoint{"192.0.2." + std::to_string(i + 1), 443};
    server.sni = "www.example.com";
    server.gossip = Endpoint{"192.0.2." + std::to_string(i + 1), 4716};
    server.key = key(static_cast<std::uint8_t>(10 + i)).public_key;
    server.routes = {"eu"};
    roster.servers.push_back(server);
  }
  return roster;
}

Bytes signed_by(const Roster& roster, const SecretKey& signer) {
  return encode_signed_record(RecordKind::roster, kOperatorOrigin, roster.version, 1'700'000'000'000,
                              encode_roster_payload(roster), signer);
}

// `raw` with its only occurrence of `from` replaced by `to` (same length).
Bytes replaced(Bytes raw, const std::string& from, const std::string& to) {
  auto at = std::search(raw.begin(), raw.end(), from.begin(), from.end());
  REQUIRE(at != raw.end());
  REQUIRE(std::search(at + 1, raw.end(), from.begin(), from.end()) == raw.end());
  std::copy(to.begin(), to.end(), at);
  return raw;
}

bool contains(const std::string& text, const std::string& fragment) { return text.find(fragment) != std::string::npos; }

const KeyPair kOperator = key(1);
const std::string kOperatorHex = public_key_to_hex(kOperator.public_key);

TEST_CASE("a roster signed by operator_key is accepted, decoded") {
  const auto check = check_roster_record(signed_by(two_servers(), kOperator.secret_key), kOperator.public_key, {});
  CHECK(check.accepted());
  REQUIRE(check.roster.has_value());
  CHECK(check.roster->version == 5);
  CHECK(check.message == "version 5, 2 servers, signed by operator_key " + kOperatorHex);
}

TEST_CASE("a roster signed with another operator key: refused, named as such, with the honest doubt") {
  const KeyPair other = key(2);
  const auto check = check_roster_record(signed_by(two_servers(), other.secret_key), kOperator.public_key, {});
  CHECK(check.refusal == RosterRefusal::not_signed_by_operator_key);
  CHECK(contains(check.message, "not signed by operator_key " + kOperatorHex));
  CHECK(contains(check.message, "most likely signed with another operator key"));
  CHECK(contains(check.message, "edited after signing"));
  CHECK(contains(check.message, "meshctl roster show --file"));
  CHECK(!check.signer.has_value());
}

TEST_CASE("a roster signed with a key the node knows: the signer is named, with both keys") {
  SUBCASE("a server's key from the roster itself") {
    const KeyPair n2 = key(11);
    const auto check = check_roster_record(signed_by(two_servers(), n2.secret_key), kOperator.public_key, {});
    CHECK(check.refusal == RosterRefusal::wrong_key);
    CHECK(contains(check.message, "server n2's key " + public_key_to_hex(n2.public_key)));
    CHECK(contains(check.message, "operator_key " + kOperatorHex));
    REQUIRE(check.signer.has_value());
    CHECK(check.signer->key == n2.public_key);
  }
  SUBCASE("this node's own key") {
    const KeyPair self = key(30);
    const auto check = check_roster_record(signed_by(two_servers(), self.secret_key), kOperator.public_key,
                                           {NamedKey{"this node's key", self.public_key}});
    CHECK(check.refusal == RosterRefusal::wrong_key);
    CHECK(contains(check.message, "this node's key " + public_key_to_hex(self.public_key)));
  }
}

TEST_CASE("a damaged or tampered file is told apart from a wrong key wherever its bytes show it") {
  const Bytes good = signed_by(two_servers(), kOperator.secret_key);
  SUBCASE("not a record at all") {
    const std::string text = "not a record";
    const auto check = check_roster_record(Bytes(text.begin(), text.end()), kOperator.public_key, {});
    CHECK(check.refusal == RosterRefusal::damaged);
    CHECK(contains(check.message, "not a signed record"));
  }
  SUBCASE("cut short") {
    const auto check = check_roster_record(ByteView(good.data(), good.size() - 10), kOperator.public_key, {});
    CHECK(check.refusal == RosterRefusal::damaged);
  }
  SUBCASE("a payload edited into one that breaks the roster rules (NZ to XQ, no country)") {
    const auto check = check_roster_record(replaced(good, "NZ", "XQ"), kOperator.public_key, {});
    CHECK(check.refusal == RosterRefusal::damaged);
    CHECK(contains(check.message, "not a valid roster"));
    CHECK(contains(check.message, "altered after signing"));
  }
  SUBCASE("a signature no key makes (its scalar half over the group order)") {
    Bytes tampered = good;
    tampered.back() = 0xff;  // the signature is the envelope's last field
    const auto check = check_roster_record(tampered, kOperator.public_key, {});
    CHECK(check.refusal == RosterRefusal::damaged);
    CHECK(contains(check.message, "not one any key makes"));
  }
  SUBCASE("another kind of record") {
    const KeyPair n1 = key(10);
    const Bytes report = encode_signed_record(RecordKind::report, "n1", 1, 1'700'000'000'000, Bytes{0x90}, n1.secret_key);
    const auto check = check_roster_record(report, kOperator.public_key, {});
    CHECK(check.refusal == RosterRefusal::damaged);
    CHECK(contains(check.message, "not the operator's roster"));
  }
  SUBCASE("an edit that leaves a valid roster cannot be told from another key, and says so") {
    const auto check = check_roster_record(replaced(good, "Europe", "Europa"), kOperator.public_key, {});
    CHECK(check.refusal == RosterRefusal::not_signed_by_operator_key);
    CHECK(contains(check.message, "edited after signing, which its bytes cannot tell apart"));
  }
}

TEST_CASE("membership: absent, or listed with another key, names both keys") {
  const Roster roster = two_servers();
  const KeyPair n1 = key(10), stranger = key(40);
  CHECK_FALSE(check_membership(roster, "n1", n1.public_key).has_value());
  auto other_key = check_membership(roster, "n1", stranger.public_key);
  REQUIRE(other_key.has_value());
  CHECK(other_key->problem == MembershipProblem::key_mismatch);
  CHECK(contains(other_key->message, public_key_to_hex(n1.public_key)));
  CHECK(contains(other_key->message, public_key_to_hex(stranger.public_key)));
  auto absent = check_membership(roster, "n9", stranger.public_key);
  REQUIRE(absent.has_value());
  CHECK(absent->problem == MembershipProblem::not_in_roster);
  CHECK(contains(absent->message, "no server 'n9'"));
  auto renamed = check_membership(roster, "n9", n1.public_key);
  REQUIRE(renamed.has_value());
  CHECK(contains(renamed->message, "as server 'n1'"));
}

TEST_CASE("the roster's gossip endpoint for this node against [gossip] listen") {
  const Endpoint roster{"192.0.2.1", 4716};
  CHECK_FALSE(gossip_endpoint_mismatch(roster, Endpoint{"0.0.0.0", 4716}).has_value());
  CHECK_FALSE(gossip_endpoint_mismatch(roster, Endpoint{"192.0.2.1", 4716}).has_value());
  CHECK_FALSE(gossip_endpoint_mismatch(Endpoint{"node1.example.net", 4716}, Endpoint{"10.0.0.1", 4716}).has_value());
  auto port = gossip_endpoint_mismatch(roster, Endpoint{"0.0.0.0", 4800});
  REQUIRE(port.has_value());
  CHECK(contains(*port, "192.0.2.1:4716"));
  CHECK(contains(*port, "0.0.0.0:4800"));
  CHECK(contains(*port, "ports should match"));
  auto host = gossip_endpoint_mismatch(roster, Endpoint{"192.0.2.9", 4716});
  REQUIRE(host.has_value());
  CHECK(contains(*host, "addresses should match"));
}

}  // namespace
}  // namespace mesh::node

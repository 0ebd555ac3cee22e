// Checks tests/vectors/gossip.json (made by make_vectors gossip): the gossip
// code reproduces every value, and each value follows from docs/PROTOCOL.md
// by plain libsodium calls. A change to the link keys, the frame layout or
// counters, hash32, the digest or the overlay order breaks this test.
#include <doctest/doctest.h>
#include <sodium.h>

#include <algorithm>
#include <fstream>
#include <nlohmann/json.hpp>

#include "gossip/core.h"
#include "gossip/link.h"
#include "gossip/peers.h"

using namespace mesh;

namespace {

using Json = nlohmann::json;

Json load(const char* name) {
  std::ifstream in(std::string(MESHNODE_SOURCE_DIR) + "/tests/vectors/" + name);
  REQUIRE(in.good());
  return Json::parse(in);
}

Bytes hex_bytes(const Json& value) {
  auto bytes = from_hex(value.get<std::string>());
  REQUIRE(bytes.has_value());
  return *bytes;
}

KeyPair key_from(const Json& seed) { return key_pair_from_seed(hex_bytes(seed)); }

// Opens a frame the way docs/PROTOCOL.md §2 says, without gossip/link.h:
// the header is `header_bytes` long and the nonce is boot || counter (8
// bytes each, big-endian) || 8 zero bytes.
bool opens(const Bytes& frame, std::size_t header_bytes, std::uint64_t boot, std::uint64_t counter,
           const Bytes& key, Bytes& plaintext) {
  REQUIRE(frame.size() >= header_bytes + gossip::kFrameTagBytes);
  std::array<std::uint8_t, 24> nonce{};
  for (int i = 0; i < 8; ++i) {
    nonce[static_cast<std::size_t>(i)] = static_cast<std::uint8_t>(boot >> (56 - 8 * i));
    nonce[static_cast<std::size_t>(8 + i)] = static_cast<std::uint8_t>(counter >> (56 - 8 * i));
  }
  plaintext.resize(frame.size() - header_bytes - gossip::kFrameTagBytes);
  unsigned long long written = 0;
  return crypto_aead_xchacha20poly1305_ietf_decrypt(plaintext.data(), &written, nullptr, frame.data() + header_bytes,
                                                    frame.size() - header_bytes, frame.data(), header_bytes,
                                                    nonce.data(), key.data()) == 0;
}

}  // namespace

TEST_CASE("link keys and the sealed frame: the code seals exactly the vector's bytes") {
  REQUIRE(sodium_init() >= 0);
  const Json vectors = load("gossip.json");
  const Json& keys = vectors["link_keys"];
  const Json& f = vectors["sealed_frame"];
  const KeyPair a = key_from(keys["a_seed"]), b = key_from(keys["b_seed"]);
  CHECK(public_key_to_hex(a.public_key) == keys["a_public_key"]);
  CHECK(public_key_to_hex(b.public_key) == keys["b_public_key"]);
  const bool a_client = std::lexicographical_compare(a.public_key.begin(), a.public_key.end(),
                                                     b.public_key.begin(), b.public_key.end());
  CHECK(keys["client"] == (a_client ? "a" : "b"));
  // The frame counter starts at 0 and rises per frame: the sixth frame has counter 5.
  gossip::LinkCrypto sender(a.secret_key, f["boot_counter"].get<std::uint64_t>());
  const Bytes plaintext = hex_bytes(f["plaintext"]);
  for (std::uint64_t i = 0; i < f["frame_counter"].get<std::uint64_t>(); ++i) {
    REQUIRE(sender.seal(b.public_key, plaintext).ok());
  }
  const Bytes frame = sender.seal(b.public_key, plaintext).value();
  CHECK(to_hex(frame) == f["frame"].get<std::string>());
  const Bytes header_bytes = hex_bytes(f["header"]);
  CHECK(header_bytes.size() == 7);  // magic, 4 bytes of key id, boot 3 and counter 5 in one byte each
  CHECK(to_hex(ByteView(frame).first(header_bytes.size())) == f["header"].get<std::string>());
  CHECK(to_hex(hex_bytes(f["nonce"])) == "000000000000000300000000000000050000000000000000");
  auto header = gossip::parse_frame_header(frame);
  REQUIRE(header.ok());
  CHECK(header->bytes == header_bytes.size());
  CHECK(header->boot == f["boot_counter"].get<std::uint64_t>());
  CHECK(header->counter == f["frame_counter"].get<std::uint64_t>());
  CHECK(header->sender == gossip::key_id_of(a.public_key));
  // a -> b uses the direction key the vector names; b -> a the other one.
  const Bytes a_to_b = hex_bytes(keys[a_client ? "client_to_server_key" : "server_to_client_key"]);
  const Bytes b_to_a = hex_bytes(keys[a_client ? "server_to_client_key" : "client_to_server_key"]);
  CHECK(to_hex(a_to_b) == f["key"].get<std::string>());
  Bytes opened;
  const std::uint64_t boot = f["boot_counter"].get<std::uint64_t>();
  const std::uint64_t counter = f["frame_counter"].get<std::uint64_t>();
  CHECK(opens(frame, header_bytes.size(), boot, counter, a_to_b, opened));
  CHECK(opened == plaintext);
  CHECK_FALSE(opens(frame, header_bytes.size(), boot, counter, b_to_a, opened));
  gossip::LinkCrypto receiver(b.secret_key, 1);
  CHECK(receiver.open(a.public_key, *header, frame).value() == plaintext);
  const Bytes reply = receiver.seal(a.public_key, plaintext).value();
  CHECK(gossip::parse_frame_header(reply)->counter == 0);
  CHECK(opens(reply, 7, 1, 0, b_to_a, opened));
}

TEST_CASE("hash32 and the digest of a record set") {
  REQUIRE(sodium_init() >= 0);
  const Json vectors = load("gossip.json");
  const Json records = load("records.json");
  Bytes report_ok;
  for (const Json& v : records) {
    if (v["name"] == vectors["hash32"]["record"]) report_ok = hex_bytes(v["record"]);
  }
  auto view = decode_envelope_view(report_ok);
  REQUIRE(view.ok());
  CHECK(gossip::make_stored_record(*view, nullptr)->fingerprint32() == vectors["hash32"]["hash32"].get<std::uint32_t>());

  const Json& d = vectors["digest"];
  std::vector<Bytes> held;
  for (const Json& raw : d["records"]) held.push_back(hex_bytes(raw));
  gossip::CoreConfig config;
  config.self = "fi-hel-1";
  config.node_key = key_pair_from_seed(Bytes(32, 0x43)).secret_key;
  config.operator_key = public_key_from_hex(records[0]["public_key"].get<std::string>()).value();
  gossip::GossipCore core(config, 1);
  (void)core.load(held, decode_envelope(held.back()).value().timestamp_ms);
  REQUIRE(core.record_count() == held.size());
  const gossip::Digest digest = core.digest();
  CHECK(to_hex(ByteView(digest.data(), digest.size())) == d["digest"].get<std::string>());
  const Bytes input = hex_bytes(d["input"]);
  std::array<std::uint8_t, 32> expected{};
  crypto_generichash(expected.data(), expected.size(), input.data(), input.size(), nullptr, 0);
  CHECK(expected == digest);

  // The SUMMARY of the same set at each cutoff, and its documented input.
  REQUIRE(vectors["summary"]["cases"].size() == 2);
  for (const Json& c : vectors["summary"]["cases"]) {
    const auto summary = core.summary(c["cutoff_ms"].get<UnixMs>());
    CHECK(to_hex(ByteView(summary.data(), summary.size())) == c["summary"].get<std::string>());
    const Bytes summary_input = hex_bytes(c["input"]);
    std::array<std::uint8_t, 16> hashed{};
    crypto_generichash(hashed.data(), hashed.size(), summary_input.data(), summary_input.size(), nullptr, 0);
    CHECK(hashed == summary);
  }
}

TEST_CASE("the overlay: ring order by BLAKE2b-64 read big-endian, and each node's neighbours") {
  REQUIRE(sodium_init() >= 0);
  const Json o = load("gossip.json")["overlay"];
  Roster roster;
  for (const Json& id : o["servers"]) roster.servers.push_back(ServerEntry{.id = id.get<std::string>()});
  const std::size_t rings = o["rings"].get<std::size_t>();
  for (std::uint32_t r = 0; r < rings; ++r) {
    const Json& ring = o["ring_order"][r];
    REQUIRE(ring.size() == roster.servers.size());
    std::uint64_t previous = 0;
    for (const Json& entry : ring) {
      const std::string id = entry["id"].get<std::string>();
      static constexpr char kContext[] = "meshnode-gossip-overlay-v1";  // hashed with its NUL
      Bytes input(kContext, kContext + sizeof kContext);
      input.insert(input.end(), id.begin(), id.end());
      for (int i = 0; i < 4; ++i) input.push_back(static_cast<std::uint8_t>(r >> (24 - 8 * i)));
      std::array<std::uint8_t, 8> out{};
      crypto_generichash(out.data(), out.size(), input.data(), input.size(), nullptr, 0);
      std::uint64_t value = 0;
      for (std::uint8_t byte : out) value = value << 8 | byte;
      CHECK(to_hex(ByteView(out.data(), out.size())) == entry["hash"].get<std::string>());
      CHECK(std::to_string(value) == entry["value"].get<std::string>());
      CHECK(value >= previous);
      previous = value;
    }
  }
  for (std::uint32_t i = 0; i < roster.servers.size(); ++i) {
    gossip::PeerSets peers;
    peers.reset(roster, i, rings);
    std::vector<std::string> ids;
    for (std::uint32_t n : peers.neighbours()) ids.push_back(roster.servers[n].id);
    CHECK(Json(ids) == o["neighbours"][roster.servers[i].id]);
  }
}

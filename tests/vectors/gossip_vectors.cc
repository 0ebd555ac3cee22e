#include "tests/vectors/gossip_vectors.h"

#include <sodium.h>

#include <algorithm>
#include <array>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "gossip/core.h"
#include "gossip/link.h"
#include "gossip/peers.h"
#include "record/report.h"

namespace mesh {
namespace {

using Json = nlohmann::json;

constexpr UnixMs kTimestamp = 1'700'000'000'000;
constexpr std::uint8_t kSeedA = 0x41;         // de-fra-1 of records.json's roster
constexpr std::uint8_t kSeedB = 0x42;         // nl-ams-1
constexpr std::uint8_t kSeedC = 0x43;         // the node whose core computes the digest
constexpr std::uint8_t kOperatorSeed = 0x4f;  // the roster's signer
constexpr std::uint64_t kBootCounter = 3;
constexpr std::uint64_t kFramesBefore = 5;  // the vector's frame is the sender's sixth: counter 5
constexpr const char* kPlaintextHex = "920191920493020300";  // [1, [[4, [2, 3, 0]]]] (§3)
constexpr std::size_t kOverlayRings = 2;
constexpr char kOverlayContext[] = "meshnode-gossip-overlay-v1";  // hashed with its NUL

void require(bool ok, const char* what) {
  if (ok) return;
  std::fprintf(stderr, "make_vectors: the code and docs/PROTOCOL.md disagree: %s\n", what);
  std::abort();
}

KeyPair key_of(std::uint8_t seed_byte) {
  std::array<std::uint8_t, 32> seed{};
  seed.fill(seed_byte);
  return key_pair_from_seed(seed);
}

std::string seed_hex(std::uint8_t seed_byte) { return to_hex(Bytes(32, seed_byte)); }

template <std::size_t N>
std::string hex(const std::array<std::uint8_t, N>& bytes) {
  return to_hex(ByteView(bytes.data(), bytes.size()));
}

Bytes record_named(const Json& records, const std::string& name) {
  for (const Json& v : records) {
    if (v["name"] == name) return *from_hex(v["record"].get<std::string>());
  }
  require(false, "records.json lacks a record");
  return {};
}

struct X25519 {
  std::array<std::uint8_t, 32> public_key{}, secret_key{};
};

X25519 x25519_of(const KeyPair& pair) {
  X25519 x;
  require(crypto_sign_ed25519_pk_to_curve25519(x.public_key.data(), pair.public_key.data()) == 0 &&
              crypto_sign_ed25519_sk_to_curve25519(x.secret_key.data(), pair.secret_key.bytes.data()) == 0,
          "X25519 conversion");
  return x;
}

// The session keys of the pair (a, b), as §2 derives them.
struct SessionKeys {
  bool a_is_client = false;
  std::array<std::uint8_t, 32> client_to_server{}, server_to_client{};
};

SessionKeys session_keys() {
  const KeyPair a = key_of(kSeedA), b = key_of(kSeedB);
  SessionKeys keys;
  keys.a_is_client = std::lexicographical_compare(a.public_key.begin(), a.public_key.end(),
                                                  b.public_key.begin(), b.public_key.end());
  const X25519 client = x25519_of(keys.a_is_client ? a : b), server = x25519_of(keys.a_is_client ? b : a);
  require(crypto_kx_client_session_keys(keys.server_to_client.data(), keys.client_to_server.data(),
                                        client.public_key.data(), client.secret_key.data(),
                                        server.public_key.data()) == 0,
          "crypto_kx");
  return keys;
}

Json link_keys_vector(const SessionKeys& keys) {
  const KeyPair a = key_of(kSeedA), b = key_of(kSeedB);
  return {{"note", "crypto_kx session keys of the pair (a, b); the smaller Ed25519 public key is the client"},
          {"a_seed", seed_hex(kSeedA)},
          {"a_public_key", public_key_to_hex(a.public_key)},
          {"a_x25519_public_key", hex(x25519_of(a).public_key)},
          {"b_seed", seed_hex(kSeedB)},
          {"b_public_key", public_key_to_hex(b.public_key)},
          {"b_x25519_public_key", hex(x25519_of(b).public_key)},
          {"client", keys.a_is_client ? "a" : "b"},
          {"client_to_server_key", hex(keys.client_to_server)},
          {"server_to_client_key", hex(keys.server_to_client)}};
}

Json sealed_frame_vector(const SessionKeys& keys) {
  const KeyPair sender = key_of(kSeedA), receiver = key_of(kSeedB);
  const Bytes plaintext = *from_hex(kPlaintextHex);
  gossip::LinkCrypto link(sender.secret_key, kBootCounter);
  for (std::uint64_t i = 0; i < kFramesBefore; ++i) require(link.seal(receiver.public_key, plaintext).ok(), "seal");
  const Bytes frame = link.seal(receiver.public_key, plaintext).value();
  // The same frame from the document: header (magic, key id, boot and
  // counter as varints; both below 128 here, one byte each), nonce, key, AEAD.
  const Bytes header{gossip::kFrameMagic,     sender.public_key[0], sender.public_key[1],
                     sender.public_key[2],    sender.public_key[3], static_cast<std::uint8_t>(kBootCounter),
                     static_cast<std::uint8_t>(kFramesBefore)};
  static_assert(kBootCounter < 128 && kFramesBefore < 128);
  std::array<std::uint8_t, 24> nonce{};
  for (int i = 0; i < 8; ++i) {
    nonce[static_cast<std::size_t>(i)] = static_cast<std::uint8_t>(kBootCounter >> (56 - 8 * i));
    nonce[static_cast<std::size_t>(8 + i)] = static_cast<std::uint8_t>(kFramesBefore >> (56 - 8 * i));
  }
  const auto& key = keys.a_is_client ? keys.client_to_server : keys.server_to_client;
  Bytes sealed(plaintext.size() + gossip::kFrameTagBytes);
  unsigned long long sealed_bytes = 0;
  crypto_aead_xchacha20poly1305_ietf_encrypt(sealed.data(), &sealed_bytes, plaintext.data(), plaintext.size(),
                                             header.data(), header.size(), nullptr, nonce.data(), key.data());
  Bytes expected = header;
  expected.insert(expected.end(), sealed.begin(), sealed.end());
  require(frame == expected, "sealed frame");
  return {{"note", "a seals the plaintext for b: the sixth frame a core with boot counter 3 seals "
                   "(frame counters start at 0)"},
          {"sender", "a"},
          {"receiver", "b"},
          {"boot_counter", kBootCounter},
          {"frame_counter", kFramesBefore},
          {"plaintext", kPlaintextHex},
          {"header", to_hex(header)},
          {"nonce", hex(nonce)},
          {"key", hex(key)},
          {"frame", to_hex(frame)}};
}

Json hash32_vector(const Json& records) {
  const Bytes raw = record_named(records, "report_ok");
  auto view = decode_envelope_view(raw);
  require(view.ok(), "report_ok decodes");
  const std::uint32_t hash32 = gossip::make_stored_record(*view, nullptr)->fingerprint32();
  char text[9];
  std::snprintf(text, sizeof text, "%08x", hash32);
  return {{"note", "hash32 of records.json's report_ok: the first 4 bytes of its signature, big-endian"},
          {"record", "report_ok"},
          {"hash32", hash32},
          {"hash32_hex", text}};
}

// nl-ams-1's report on roster version 1: both other servers ok.
Bytes second_report() {
  Report report;
  report.view.roster_version = 1;
  report.view.results = {{0, 0, 7, kTimestamp - 30'000, kTimestamp - 30'000, ProbeFailure::none},
                         {2, 0, 7, kTimestamp - 30'000, kTimestamp - 30'000, ProbeFailure::none}};
  return encode_signed_record(RecordKind::report, "nl-ams-1", 2, kTimestamp,
                              encode_report_payload(report, kTimestamp), key_of(kSeedB).secret_key);
}

// §7's hash input of one record.
void append_digest_input(Bytes& input, const Envelope& envelope) {
  input.push_back(static_cast<std::uint8_t>(envelope.kind));
  input.push_back(static_cast<std::uint8_t>(envelope.origin.size()));
  input.insert(input.end(), envelope.origin.begin(), envelope.origin.end());
  for (int i = 0; i < 8; ++i) input.push_back(static_cast<std::uint8_t>(envelope.seq >> (56 - 8 * i)));
  input.insert(input.end(), envelope.signature.begin(), envelope.signature.end());
}

// The set the digest and summary vectors hash, and fi-hel-1's core holding it.
struct HeldSet {
  std::vector<Bytes> held;
  std::unique_ptr<gossip::GossipCore> core;
};

HeldSet held_set(const Json& records) {
  HeldSet set;
  set.held = {record_named(records, "roster_ok"), record_named(records, "report_ok"), second_report()};
  gossip::CoreConfig config;
  config.self = "fi-hel-1";
  config.node_key = key_of(kSeedC).secret_key;
  config.operator_key = key_of(kOperatorSeed).public_key;
  set.core = std::make_unique<gossip::GossipCore>(config, 1);
  (void)set.core->load(set.held, kTimestamp);
  require(set.core->record_count() == set.held.size(), "the set's records are accepted");
  return set;
}

Json digest_vector(const Json& records) {
  const auto [held, core] = held_set(records);
  const gossip::Digest digest = core->digest();
  // Sorted by (kind, origin): the roster, then de-fra-1's and nl-ams-1's reports.
  Bytes input;
  for (const Bytes& raw : held) append_digest_input(input, decode_envelope(raw).value());
  std::array<std::uint8_t, 32> expected{};
  crypto_generichash(expected.data(), expected.size(), input.data(), input.size(), nullptr, 0);
  require(expected == digest, "digest");
  Json list = Json::array();
  for (const Bytes& raw : held) list.push_back(to_hex(raw));
  return {{"note", "BLAKE2b-256 of the held set {roster_ok, report_ok, nl-ams-1's report seq 2}; "
                   "input is the hashed bytes (section 7)"},
          {"records", list},
          {"input", to_hex(input)},
          {"digest", hex(digest)}};
}

// §5's SUMMARY of the same set, at a cutoff that takes every record and at
// one just before the newest: the count and the eight 64-bit lane sums of
// the signatures, hashed.
Json summary_vector(const Json& records) {
  const auto [held, core] = held_set(records);
  Json cases = Json::array();
  UnixMs newest = 0;
  for (const Bytes& raw : held) newest = std::max(newest, decode_envelope(raw).value().timestamp_ms);
  for (const UnixMs cutoff : {newest, newest - 1}) {
    std::uint32_t count = 0;
    std::array<std::uint64_t, 8> lanes{};
    for (const Bytes& raw : held) {
      const Envelope envelope = decode_envelope(raw).value();
      if (envelope.timestamp_ms > cutoff) continue;
      ++count;
      for (std::size_t lane = 0; lane < 8; ++lane) {
        std::uint64_t value = 0;
        for (std::size_t i = 0; i < 8; ++i) value = value << 8 | envelope.signature[8 * lane + i];
        lanes[lane] += value;
      }
    }
    Bytes input;
    for (int i = 0; i < 4; ++i) input.push_back(static_cast<std::uint8_t>(count >> (24 - 8 * i)));
    for (const std::uint64_t lane : lanes) {
      for (int i = 0; i < 8; ++i) input.push_back(static_cast<std::uint8_t>(lane >> (56 - 8 * i)));
    }
    std::array<std::uint8_t, 16> expected{};
    crypto_generichash(expected.data(), expected.size(), input.data(), input.size(), nullptr, 0);
    require(expected == core->summary(cutoff), "summary");
    cases.push_back({{"cutoff_ms", cutoff}, {"input", to_hex(input)}, {"summary", hex(expected)}});
  }
  return {{"note", "BLAKE2b-128 SUMMARY of the digest vector's set (section 5), at two cutoffs: every "
                   "record has timestamp 1700000000000, so the second takes none; input is the hashed "
                   "bytes: count (4 B BE), then the eight lane sums (8 B BE each)"},
          {"cases", cases}};
}

// BLAKE2b with an 8-byte output of context || id || ring (4 B BE), and
// those 8 bytes read big-endian.
std::pair<Bytes, std::uint64_t> overlay_hash(const std::string& id, std::uint32_t ring) {
  Bytes input(kOverlayContext, kOverlayContext + sizeof kOverlayContext);
  input.insert(input.end(), id.begin(), id.end());
  for (int i = 0; i < 4; ++i) input.push_back(static_cast<std::uint8_t>(ring >> (24 - 8 * i)));
  std::array<std::uint8_t, 8> out{};
  crypto_generichash(out.data(), out.size(), input.data(), input.size(), nullptr, 0);
  std::uint64_t value = 0;
  for (std::uint8_t b : out) value = value << 8 | b;
  return {Bytes(out.begin(), out.end()), value};
}

Json overlay_vector() {
  const std::vector<std::string> ids = {"de-fra-1", "nl-ams-1", "fi-hel-1", "fr-par-1",
                                        "pl-waw-1", "se-sto-1", "it-mil-1", "es-mad-1"};
  Roster roster;
  for (const std::string& id : ids) roster.servers.push_back(ServerEntry{.id = id});
  Json rings = Json::array();
  std::vector<std::set<std::uint32_t>> linked(ids.size());  // from the rings, as the document says
  for (std::uint32_t r = 0; r < kOverlayRings; ++r) {
    std::vector<std::tuple<std::uint64_t, std::uint32_t, Bytes>> order;
    for (std::uint32_t i = 0; i < ids.size(); ++i) {
      auto [bytes, value] = overlay_hash(ids[i], r);
      order.emplace_back(value, i, bytes);
    }
    std::sort(order.begin(), order.end());
    for (std::size_t p = 0; p < order.size(); ++p) {
      const std::uint32_t a = std::get<1>(order[p]), b = std::get<1>(order[(p + 1) % order.size()]);
      linked[a].insert(b);
      linked[b].insert(a);
    }
    Json ring = Json::array();
    for (const auto& [value, index, bytes] : order) {
      ring.push_back({{"id", ids[index]}, {"hash", to_hex(bytes)}, {"value", std::to_string(value)}});
    }
    rings.push_back(ring);
  }
  Json neighbours = Json::object();
  for (std::uint32_t i = 0; i < ids.size(); ++i) {
    gossip::PeerSets peers;
    peers.reset(roster, i, kOverlayRings);
    require(std::vector<std::uint32_t>(linked[i].begin(), linked[i].end()) == peers.neighbours(),
            "overlay neighbours");
    Json list = Json::array();
    for (std::uint32_t n : peers.neighbours()) list.push_back(ids[n]);
    neighbours[ids[i]] = list;
  }
  return {{"note", "overlay_rings = 2 over 8 servers (roster order = ids): each ring in ascending "
                   "order of value, each member linked to its successor (the last to the first)"},
          {"context", std::string(kOverlayContext) + "\\0"},
          {"rings", kOverlayRings},
          {"servers", ids},
          {"ring_order", rings},
          {"neighbours", neighbours}};
}

}  // namespace

Json gossip_vectors(const Json& record_vectors) {
  require(sodium_init() >= 0, "sodium_init");
  const SessionKeys keys = session_keys();
  return {{"link_keys", link_keys_vector(keys)},
          {"sealed_frame", sealed_frame_vector(keys)},
          {"hash32", hash32_vector(record_vectors)},
          {"digest", digest_vector(record_vectors)},
          {"summary", summary_vector(record_vectors)},
          {"overlay", overlay_vector()}};
}

}  // namespace mesh

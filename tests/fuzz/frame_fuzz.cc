// Fuzz target: a sealed gossip frame into a gossip core (gossip/link.h,
// gossip/wire.h, gossip/core.h; docs/PROTOCOL.md, Gossip). The receiver is
// nl-ams-1 of the vectors' three-server roster, holding that roster and
// nothing else; a fresh core per input, so every run is reproducible.
//
// Input: one mode byte, then bytes.
//   mode % 4 == 0: the bytes are a frame off the wire, handed over as they are
//                  (header parse, sender lookup, AEAD refusal);
//   mode % 4 == 1: the bytes are a plaintext, sealed by de-fra-1 with the fixed
//                  link keys, then handed over (opened, decoded, applied);
//   mode % 4 == 2: the same, sealed by fi-hel-1;
//   mode % 4 == 3: sealed by de-fra-1 and handed over twice (the replay).
//
// Properties:
// - a refused frame (oversize, malformed, unknown sender, undecryptable,
//   replayed) changes nothing: no effects, the same digest and record count,
//   and every counter but frames_received, bytes_received and that one drop
//   counter unchanged; a second delivery of a frame is always refused (as
//   replayed while the roster stays the same);
// - a frame whose bodies store nothing leaves the digest and record count
//   unchanged; every record to persist decodes, and the roster never goes back;
// - the plaintext decoder's output re-encodes to a plaintext that decodes to
//   the same content, and that encoding is stable;
// - the next tick sends at most one frame per member, none to itself, none
//   over kFrameBytesMax.
#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <memory>
#include <set>
#include <span>
#include <vector>

#include "gossip/core.h"
#include "gossip/link.h"
#include "gossip/wire.h"
#include "tests/fuzz/fuzz_support.h"

namespace {

using namespace mesh;
using namespace mesh::gossip;

constexpr UnixMs kNowMs = fuzz::kVectorTimestampMs + 60'000;
constexpr std::uint32_t kReceiver = 1;  // nl-ams-1
constexpr std::size_t kMemoEntriesMax = 4096;

// Signature checks and roster decodes are pure functions of their inputs
// (gossip/verifier.h); remembering them keeps a fresh core per input cheap.
// Bounded: cleared when full. Keyed by std::string, not Bytes: g++ 12 at -O3
// misreads std::vector's operator< (a -Wstringop-overread false positive).
std::string key_of_bytes(ByteView bytes) { return {reinterpret_cast<const char*>(bytes.data()), bytes.size()}; }

class MemoVerifier final : public SignatureVerifier {
 public:
  bool verify(const PublicKey& key, ByteView message, const Signature& signature) override {
    std::string id = key_of_bytes(ByteView(key.data(), key.size()));
    id += key_of_bytes(ByteView(signature.data(), signature.size()));
    id += key_of_bytes(message);
    if (auto it = memo_.find(id); it != memo_.end()) return it->second;
    if (memo_.size() >= kMemoEntriesMax) memo_.clear();
    const bool ok = verify_detached(key, message, signature);
    memo_.emplace(std::move(id), ok);
    return ok;
  }

 private:
  std::map<std::string, bool> memo_;
};

class MemoRosterDecoder final : public RosterDecoder {
 public:
  Result<std::shared_ptr<const IndexedRoster>, RosterError> decode(ByteView payload,
                                                                   std::uint64_t seq) override {
    auto id = std::make_pair(key_of_bytes(payload), seq);
    if (auto it = memo_.find(id); it != memo_.end()) return it->second;
    if (memo_.size() >= kMemoEntriesMax) memo_.clear();
    auto decoded = plain_.decode(payload, seq);
    memo_.emplace(std::move(id), decoded);
    return decoded;
  }

 private:
  PlainRosterDecoder plain_;
  std::map<std::pair<std::string, std::uint64_t>, Result<std::shared_ptr<const IndexedRoster>, RosterError>> memo_;
};

struct Fixture {
  Roster roster = fuzz::vector_roster();
  KeyPair operator_key = fuzz::key_of(fuzz::kOperatorSeed);
  Bytes roster_record = encode_signed_record(RecordKind::roster, kOperatorOrigin, roster.version,
                                             fuzz::kVectorTimestampMs, encode_roster_payload(roster),
                                             operator_key.secret_key);
  // Senders keep their link state across inputs: their frame counter only
  // rises, so a fresh receiver never sees a nonce twice unless told to.
  LinkCrypto de_fra_1{fuzz::key_of(fuzz::kServerSeeds[0]).secret_key, 1};
  LinkCrypto fi_hel_1{fuzz::key_of(fuzz::kServerSeeds[2]).secret_key, 1};
  MemoVerifier verifier;
  MemoRosterDecoder rosters;

  std::unique_ptr<GossipCore> fresh_core() {
    CoreConfig config;
    config.self = roster.servers[kReceiver].id;
    config.node_key = fuzz::key_of(fuzz::kServerSeeds[kReceiver]).secret_key;
    config.operator_key = operator_key.public_key;
    config.boot_counter = 1;
    auto core = std::make_unique<GossipCore>(config, 1, SharedWork{&verifier, &rosters, nullptr});
    Effects loaded = core->load(std::span<const Bytes>(&roster_record, 1), kNowMs);
    FUZZ_CHECK(loaded.erase.empty() && core->roster() != nullptr);
    return core;
  }
};

Fixture& fixture() {
  static Fixture* f = new Fixture();  // never destroyed: outlives every static user
  return *f;
}

std::vector<std::uint64_t> counter_values(const Counters& counters) {
  std::vector<std::uint64_t> values;
  counters.for_each([&](const char*, std::uint64_t value) { values.push_back(value); });
  return values;
}

// The drop counter a refused frame moved, or null when the frame was not refused.
std::uint64_t Counters::* refusal(const Counters& before, const Counters& after) {
  for (auto counter : {&Counters::frames_oversize, &Counters::frames_malformed,
                       &Counters::frames_unknown_sender, &Counters::frames_no_roster,
                       &Counters::frames_undecryptable, &Counters::frames_replayed}) {
    if (after.*counter != before.*counter) return counter;
  }
  return nullptr;
}

void check_delivery(GossipCore& core, ByteView frame, bool must_refuse) {
  const Counters before = core.counters();
  const Digest digest = core.digest();
  const std::size_t records = core.record_count();
  const std::uint64_t version = core.roster()->version;
  Effects effects = core.on_message(frame, kNowMs);
  const Counters& after = core.counters();
  auto refused = refusal(before, after);
  if (must_refuse) {
    // Replayed, unless a roster in the first delivery changed who the sender is.
    FUZZ_CHECK(refused != nullptr);
    if (core.roster()->version == version) FUZZ_CHECK(refused == &Counters::frames_replayed);
  }
  if (refused != nullptr) {
    FUZZ_CHECK(effects.send.empty() && effects.persist.empty() && effects.erase.empty());
    FUZZ_CHECK(!effects.roster_changed && effects.reports_changed.empty());
    FUZZ_CHECK(core.digest() == digest && core.record_count() == records);
    Counters expected = before;
    ++expected.frames_received;
    expected.bytes_received += frame.size();
    ++(expected.*refused);
    FUZZ_CHECK(counter_values(after) == counter_values(expected));
    return;
  }
  if (after.records_accepted == before.records_accepted &&
      after.records_equivocation_won == before.records_equivocation_won) {
    FUZZ_CHECK(effects.persist.empty() && !effects.roster_changed);
    FUZZ_CHECK(core.digest() == digest && core.record_count() == records);
  }
  for (const PersistRecord& record : effects.persist) FUZZ_CHECK(decode_envelope(*record.raw).ok());
  FUZZ_CHECK(core.roster()->version >= version);
}

void check_plaintext_round_trip(ByteView plaintext) {
  auto content = decode_frame_content(plaintext);
  if (!content.ok()) return;
  const Bytes encoded = encode_frame_content(*content);
  auto again = decode_frame_content(encoded);
  FUZZ_CHECK(again.ok());
  FUZZ_CHECK(again->roster_version == content->roster_version);
  FUZZ_CHECK(again->ihave == content->ihave && again->graft == content->graft);
  FUZZ_CHECK(again->prune == content->prune);
  FUZZ_CHECK(again->sync == content->sync && again->sync_reply == content->sync_reply);
  FUZZ_CHECK(again->summary == content->summary);
  FUZZ_CHECK(again->unknown_messages == 0 && again->bodies.size() == content->bodies.size());
  for (std::size_t i = 0; i < again->bodies.size(); ++i) {
    const Body& a = again->bodies[i];
    const Body& b = content->bodies[i];
    FUZZ_CHECK(a.repair == b.repair);
    FUZZ_CHECK(std::equal(a.raw.begin(), a.raw.end(), b.raw.begin(), b.raw.end()));
  }
  FUZZ_CHECK(encode_frame_content(*again) == encoded);
}

void check_tick(GossipCore& core) {
  Effects effects = core.on_tick(kNowMs + 1'000);
  std::set<std::uint32_t> peers;
  for (const Outgoing& out : effects.send) {
    FUZZ_CHECK(out.to < core.roster()->servers.size() && out.to != core.self_index());
    FUZZ_CHECK(out.frame.size() <= kFrameBytesMax);
    FUZZ_CHECK(peers.insert(out.to).second);
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  Fixture& f = fixture();
  const int mode = data[0] % 4;
  const ByteView bytes = fuzz::view_of(data + 1, size - 1);
  auto core = f.fresh_core();
  if (mode == 0) {
    check_delivery(*core, bytes, false);
    return 0;
  }
  if (bytes.size() > kFrameBytesMax - kFrameHeaderBytesMax - kFrameTagBytes) return 0;
  check_plaintext_round_trip(bytes);
  LinkCrypto& sender = mode == 2 ? f.fi_hel_1 : f.de_fra_1;
  auto frame = sender.seal(f.roster.servers[kReceiver].key, bytes);
  FUZZ_CHECK(frame.ok());
  check_delivery(*core, *frame, false);
  if (mode == 3) check_delivery(*core, *frame, true);
  check_tick(*core);
  return 0;
}

// Link crypto (sealed frames, replay window) and the message layout.
#include <doctest/doctest.h>

#include <algorithm>
#include <vector>

#include "gossip/config.h"
#include "gossip/link.h"
#include "gossip/wire.h"
#include "tests/gossip/fixture.h"

namespace mesh::gossip {
namespace {

using testing::test_key;

Bytes text(std::string_view s) { return Bytes(s.begin(), s.end()); }

TEST_CASE("a sealed frame opens only at its addressee, once") {
  const KeyPair a = test_key(1), b = test_key(2), c = test_key(3);
  LinkCrypto link_a(a.secret_key, 7), link_b(b.secret_key, 1), link_c(c.secret_key, 1);
  auto frame = link_a.seal(b.public_key, text("hello"));
  REQUIRE(frame.ok());
  CHECK(frame->size() == kFrameHeaderBytesMin + 5 + kFrameTagBytes);
  auto header = parse_frame_header(*frame);
  REQUIRE(header.ok());
  CHECK(header->sender == key_id_of(a.public_key));
  CHECK(header->boot == 7);
  CHECK(header->counter == 0);
  CHECK(header->bytes == kFrameHeaderBytesMin);
  // magic, the first 4 bytes of a's key, boot 7, counter 0.
  CHECK(Bytes(frame->begin(), frame->begin() + 7) ==
        Bytes{kFrameMagic, a.public_key[0], a.public_key[1], a.public_key[2], a.public_key[3], 7, 0});

  // Sealed for b: c (knowing a's key) cannot open it.
  auto at_c = link_c.open(a.public_key, *header, *frame);
  REQUIRE_FALSE(at_c.ok());
  CHECK(at_c.code() == LinkError::undecryptable);

  auto opened = link_b.open(a.public_key, *header, *frame);
  REQUIRE(opened.ok());
  CHECK(*opened == text("hello"));
  // The same nonce again: replay.
  auto again = link_b.open(a.public_key, *header, *frame);
  REQUIRE_FALSE(again.ok());
  CHECK(again.code() == LinkError::replayed);
}

TEST_CASE("both directions of a pair work and use different keys") {
  const KeyPair a = test_key(1), b = test_key(2);
  LinkCrypto link_a(a.secret_key, 1), link_b(b.secret_key, 1);
  auto ab = link_a.seal(b.public_key, text("x"));
  auto ba = link_b.seal(a.public_key, text("x"));
  REQUIRE(ab.ok());
  REQUIRE(ba.ok());
  // Same boot, same counter, same plaintext: only the direction key differs.
  CHECK(Bytes(ab->begin() + kFrameHeaderBytesMin, ab->end()) !=
        Bytes(ba->begin() + kFrameHeaderBytesMin, ba->end()));
  CHECK(link_a.open(b.public_key, *parse_frame_header(*ba), *ba).ok());
  CHECK(link_b.open(a.public_key, *parse_frame_header(*ab), *ab).ok());
}

TEST_CASE("retain_only drops the links of keys that left, and a returning key links again") {
  const KeyPair a = test_key(1), b = test_key(2), c = test_key(3);
  LinkCrypto link_a(a.secret_key, 1), link_c(c.secret_key, 1);
  REQUIRE(link_a.seal(b.public_key, text("x")).ok());
  REQUIRE(link_a.seal(c.public_key, text("x")).ok());
  std::vector<PublicKey> both{b.public_key, c.public_key};
  std::ranges::sort(both);
  CHECK(link_a.linked_keys() == both);

  const std::vector<PublicKey> only_b{b.public_key};
  link_a.retain_only(only_b);
  CHECK(link_a.linked_keys() == only_b);

  // c is back (a roster change): its keys are derived again and the frame
  // counter goes on, so the new frame still opens at c, under a fresh nonce.
  auto again = link_a.seal(c.public_key, text("back"));
  REQUIRE(again.ok());
  auto header = parse_frame_header(*again);
  REQUIRE(header.ok());
  CHECK(header->counter == 2);
  auto opened = link_c.open(a.public_key, *header, *again);
  REQUIRE(opened.ok());
  CHECK(*opened == text("back"));
}

TEST_CASE("a tampered header or body does not authenticate") {
  const KeyPair a = test_key(1), b = test_key(2);
  LinkCrypto link_a(a.secret_key, 7), link_b(b.secret_key, 1);
  // The key id, the boot counter (7 -> 6: a header that parses, naming
  // another nonce), the ciphertext, the tag.
  for (std::size_t position : {std::size_t{2}, std::size_t{5}, kFrameHeaderBytesMin + 1, std::size_t{29}}) {
    auto frame = link_a.seal(b.public_key, text("payload"));
    (*frame)[position] ^= 0x01;
    auto header = parse_frame_header(*frame);
    REQUIRE(header.ok());
    auto opened = link_b.open(a.public_key, *header, *frame);
    REQUIRE_FALSE(opened.ok());
    CHECK(opened.code() == LinkError::undecryptable);
  }
}

// A header of magic, key id 01020304, then `varints` (already encoded), then
// a tag's worth of bytes.
Bytes header_then_tag(const Bytes& varints, std::uint8_t magic = kFrameMagic) {
  Bytes frame{magic, 1, 2, 3, 4};
  frame.insert(frame.end(), varints.begin(), varints.end());
  frame.resize(frame.size() + kFrameTagBytes, 0xee);
  return frame;
}

TEST_CASE("frame header parse: minimal LEB128 varints; short, foreign, overlong or past 64 bits refused") {
  auto ok = parse_frame_header(header_then_tag({0x00, 0x7f}));
  REQUIRE(ok.ok());
  CHECK(ok->sender == 0x01020304u);
  CHECK(ok->boot == 0);
  CHECK(ok->counter == 127);
  CHECK(ok->bytes == 7);
  ok = parse_frame_header(header_then_tag({0x80, 0x01, 0xff, 0xff, 0x03}));  // 128, 65535
  REQUIRE(ok.ok());
  CHECK(ok->boot == 128);
  CHECK(ok->counter == 65535);
  CHECK(ok->bytes == 10);
  const Bytes max64{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01};
  Bytes both = max64;
  both.insert(both.end(), max64.begin(), max64.end());
  ok = parse_frame_header(header_then_tag(both));
  REQUIRE(ok.ok());
  CHECK(ok->boot == UINT64_MAX);
  CHECK(ok->counter == UINT64_MAX);
  CHECK(ok->bytes == kFrameHeaderBytesMax);

  const std::vector<Bytes> refused{
      {0x80, 0x00, 0x05},  // boot 0 in two bytes: not minimal
      {0x05, 0x81, 0x00},  // counter 1 in two bytes
      {0x05, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x02},  // bit 64 set
      {0x05, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x81, 0x00},  // 11 bytes
  };
  for (const Bytes& varints : refused) {
    CAPTURE(to_hex(varints));
    CHECK(parse_frame_header(header_then_tag(varints)).code() == LinkError::malformed);
  }
  // A counter that never ends: it runs through where the tag should be.
  Bytes unterminated = header_then_tag({0x05});
  std::fill(unterminated.begin() + 6, unterminated.end(), 0x80);
  CHECK(parse_frame_header(unterminated).code() == LinkError::malformed);
  // A whole header, one byte short of a tag after it.
  Bytes short_tag = header_then_tag({0x80, 0x01, 0x80, 0x01});
  short_tag.pop_back();
  CHECK(parse_frame_header(short_tag).code() == LinkError::malformed);
  CHECK(parse_frame_header(Bytes(kFrameHeaderBytesMin + kFrameTagBytes - 1, 0x00)).code() == LinkError::malformed);
  CHECK(parse_frame_header(header_then_tag({0x05, 0x05}, 0xA1)).code() == LinkError::malformed);  // format 1
  CHECK(parse_frame_header(header_then_tag({0x05, 0x05}, 0x42)).code() == LinkError::malformed);
  CHECK(parse_frame_header(Bytes{}).code() == LinkError::malformed);
}

TEST_CASE("the header grows with the boot counter, and every size seals and opens") {
  const KeyPair a = test_key(1), b = test_key(2);
  const std::vector<std::pair<std::uint64_t, std::size_t>> boots{
      {0, 7}, {127, 7}, {128, 8}, {16'383, 8}, {16'384, 9}, {std::uint64_t{1} << 63, 16}, {UINT64_MAX, 16}};
  for (const auto& [boot, header_bytes] : boots) {
    CAPTURE(boot);
    LinkCrypto sender(a.secret_key, boot), receiver(b.secret_key, 1);
    for (std::uint64_t counter = 0; counter < 3; ++counter) {
      auto frame = sender.seal(b.public_key, text("payload"));
      REQUIRE(frame.ok());
      CHECK(frame->size() == header_bytes + 7 + kFrameTagBytes);
      auto header = parse_frame_header(*frame);
      REQUIRE(header.ok());
      CHECK(header->boot == boot);
      CHECK(header->counter == counter);
      CHECK(header->bytes == header_bytes);
      CHECK(receiver.open(a.public_key, *header, *frame).value() == text("payload"));
    }
  }
  // seal_in_place drops the room the header did not use: the frame starts
  // with the header and the plaintext follows it.
  LinkCrypto sender(a.secret_key, 300), receiver(b.secret_key, 1);
  Bytes frame(kFrameHeaderBytesMax, 0xcc);
  frame.insert(frame.end(), {'h', 'i'});
  REQUIRE(sender.seal_in_place(b.public_key, frame).ok());
  CHECK(frame.size() == 8 + 2 + kFrameTagBytes);
  CHECK(frame[0] == kFrameMagic);
  auto header = parse_frame_header(frame);
  REQUIRE(header.ok());
  CHECK(receiver.open(a.public_key, *header, frame).value() == text("hi"));
}

TEST_CASE("replay window: reordered frames open, repeats and old boots do not") {
  ReplayWindow window;
  CHECK_FALSE(window.seen_or_too_old(2, 10));
  window.mark(2, 10);
  CHECK(window.seen_or_too_old(2, 10));
  CHECK_FALSE(window.seen_or_too_old(2, 5));  // late but inside the window
  window.mark(2, 5);
  CHECK(window.seen_or_too_old(2, 5));
  window.mark(2, 300);  // jump: 10 and 5 now 290+ behind
  CHECK(window.seen_or_too_old(2, 10));
  CHECK(window.seen_or_too_old(2, 300 - kReplayWindowFrames));
  CHECK_FALSE(window.seen_or_too_old(2, 300 - kReplayWindowFrames + 1));
  window.mark(2, 250);
  window.mark(2, 301);  // shift by one keeps 250 and 300 marked
  CHECK(window.seen_or_too_old(2, 250));
  CHECK(window.seen_or_too_old(2, 300));
  CHECK_FALSE(window.seen_or_too_old(2, 299));
  window.mark(2, 301 + 70);  // a shift across a word boundary
  CHECK(window.seen_or_too_old(2, 250));
  CHECK(window.seen_or_too_old(2, 301));
  CHECK_FALSE(window.seen_or_too_old(2, 302));
  CHECK(window.seen_or_too_old(1, 1'000'000));  // an older boot: always replay
  CHECK_FALSE(window.seen_or_too_old(3, 0));    // a newer boot starts afresh
  window.mark(3, 0);
  CHECK(window.seen_or_too_old(2, 400));
}

TEST_CASE("a restarted sender (boot + 1) never reuses a nonce") {
  const KeyPair a = test_key(1), b = test_key(2);
  LinkCrypto before(a.secret_key, 5), after(a.secret_key, 6), link_b(b.secret_key, 1);
  auto first = before.seal(b.public_key, text("same"));
  auto second = after.seal(b.public_key, text("same"));
  CHECK(*first != *second);
  // The first frame of the newer boot says the sender restarted; the next does not.
  Bytes plaintext;
  bool restarted = true;
  CHECK(link_b.open_into(a.public_key, *parse_frame_header(*first), *first, plaintext, &restarted).ok());
  CHECK_FALSE(restarted);  // the first frame ever heard from it
  CHECK(link_b.open_into(a.public_key, *parse_frame_header(*second), *second, plaintext, &restarted).ok());
  CHECK(restarted);
  auto third = after.seal(b.public_key, text("more"));
  CHECK(link_b.open_into(a.public_key, *parse_frame_header(*third), *third, plaintext, &restarted).ok());
  CHECK_FALSE(restarted);
  // The old boot's frames are refused from now on.
  auto late = before.seal(b.public_key, text("late"));
  CHECK(link_b.open(a.public_key, *parse_frame_header(*late), *late).code() == LinkError::replayed);
}

TEST_CASE("frame content round-trips, in a fixed order") {
  FrameContent content;
  content.roster_version = 42;
  content.prune = {Entry{RecordKind::report, 5, 98, 0}};
  content.graft = {Entry{RecordKind::report, 3, 99, 0}};
  content.ihave = {Entry{RecordKind::roster, 0, 42, 0}, Entry{RecordKind::report, 4095, 1ull << 40, 0}};
  content.sync = std::vector<Entry>{Entry{RecordKind::report, 1, 7, 0xdeadbeef}};
  content.sync_reply = std::vector<Entry>{};
  content.summary = Summary{1'700'000'000'000, {}};
  content.summary->digest[15] = 0xab;
  content.bodies = {Body::owned(false, text("abc")), Body::owned(true, text("de"))};
  const Bytes encoded = encode_frame_content(content);
  auto decoded = decode_frame_content(encoded);
  REQUIRE(decoded.ok());
  CHECK(decoded->roster_version == 42);
  CHECK(decoded->prune == content.prune);
  CHECK(decoded->graft == content.graft);
  CHECK(decoded->ihave == content.ihave);
  CHECK(*decoded->sync == *content.sync);
  CHECK(decoded->sync_reply->empty());
  CHECK(decoded->summary == content.summary);
  REQUIRE(decoded->bodies.size() == 2);
  CHECK(Bytes(decoded->bodies[0].raw.begin(), decoded->bodies[0].raw.end()) == text("abc"));
  CHECK_FALSE(decoded->bodies[0].repair);
  CHECK(decoded->bodies[1].repair);
  CHECK(decoded->unknown_messages == 0);
}

TEST_CASE("frame content pinned bytes: [1, [[4, [2, 3, 0]]]]") {
  FrameContent content;
  content.roster_version = 1;
  content.prune = {Entry{RecordKind::report, 3, 0, 0}};
  CHECK(to_hex(encode_frame_content(content)) == "920191920493020300");
}

TEST_CASE("frame content pinned bytes: a SUMMARY [8, cutoff_ms, bin 16]") {
  FrameContent content;
  content.roster_version = 1;
  content.summary = Summary{1'700'000'000'000, {}};
  for (std::size_t i = 0; i < kSummaryBytes; ++i) content.summary->digest[i] = static_cast<std::uint8_t>(i);
  // [1, [[8, 1700000000000 (uint 64), bin 8 16 bytes]]]
  CHECK(to_hex(encode_frame_content(content)) ==
        "9201919308cf0000018bcfe56800c410000102030405060708090a0b0c0d0e0f");
  CHECK(encode_frame_content(content).size() - 4 <= kSummaryMessageBytes);
}

TEST_CASE("frame content decode: a SUMMARY is exactly [8, uint, bin 16], once per frame") {
  const std::string digest = "c410000102030405060708090a0b0c0d0e0f";
  REQUIRE(decode_frame_content(*from_hex("9201919308cd1234" + digest)).ok());
  CHECK(decode_frame_content(*from_hex("9201919308cd1234" + digest))->summary->cutoff_ms == 0x1234);
  // Twice in one frame.
  CHECK(decode_frame_content(*from_hex("9201929308cd1234" + digest + "9308cd1234" + digest)).code() ==
        WireError::malformed);
  // A 15-byte digest; 17 bytes; the cutoff not an integer; two elements; four.
  CHECK(decode_frame_content(*from_hex("9201919308cd1234c40f000102030405060708090a0b0c0d0e")).code() ==
        WireError::malformed);
  CHECK(decode_frame_content(*from_hex("9201919308cd1234c411000102030405060708090a0b0c0d0e0f10")).code() ==
        WireError::malformed);
  CHECK(decode_frame_content(*from_hex("9201919308a131" + digest)).code() == WireError::malformed);
  CHECK(decode_frame_content(*from_hex("92019192080a")).code() == WireError::malformed);
  CHECK(decode_frame_content(*from_hex("9201919408cd1234" + digest + "00")).code() == WireError::malformed);
}

TEST_CASE("frame content decode: strict layout, unknown types skipped") {
  // [1, [[99, 1, 2], [4, [2, 7, 1]]]]: a future message type 99 is skipped, PRUNE kept.
  auto skipped = decode_frame_content(*from_hex("92019293630102920493020701"));
  REQUIRE(skipped.ok());
  CHECK(skipped->unknown_messages == 1);
  CHECK(skipped->prune == std::vector<Entry>{Entry{RecordKind::report, 7, 1, 0}});
  // Trailing byte.
  CHECK(decode_frame_content(*from_hex("920190c0")).code() == WireError::malformed);
  // Not an array / wrong arity / wrong types.
  CHECK(decode_frame_content(*from_hex("c0")).code() == WireError::malformed);
  CHECK(decode_frame_content(*from_hex("9101")).code() == WireError::malformed);
  CHECK(decode_frame_content(*from_hex("92a13190")).code() == WireError::malformed);
  // PRUNE with nil for its list; IHAVE list not a multiple of 3; body not bin.
  CHECK(decode_frame_content(*from_hex("9201919204c0")).code() == WireError::malformed);
  CHECK(decode_frame_content(*from_hex("9201919202920201")).code() == WireError::malformed);
  CHECK(decode_frame_content(*from_hex("9201919201a161")).code() == WireError::malformed);
  // Truncated.
  CHECK(decode_frame_content(*from_hex("920191920193")).code() == WireError::malformed);
  // An entry origin beyond u32.
  CHECK(decode_frame_content(*from_hex("92019192029302cf000000010000000001")).code() ==
        WireError::malformed);
}

TEST_CASE("frame content decode: lists over kEntriesPerListMax are refused") {
  FrameContent content;
  content.ihave.assign(kEntriesPerListMax, Entry{RecordKind::report, 1, 1, 0});
  CHECK(decode_frame_content(Bytes(encode_frame_content(content))).ok());
  // Two IHAVE messages that merge past the bound.
  Bytes one = encode_frame_content(content);
  // Build [0, [ihave, ihave]] by hand from the single message's bytes.
  const Bytes message(one.begin() + 3, one.end());  // skip 92 00 91
  Bytes doubled = {0x92, 0x00, 0x92};
  doubled.insert(doubled.end(), message.begin(), message.end());
  doubled.insert(doubled.end(), message.begin(), message.end());
  CHECK(decode_frame_content(doubled).code() == WireError::oversize);
}

TEST_CASE("frame content decode: mutated frames never crash, and what decodes re-encodes stably") {
  // A rich valid plaintext: every message type, an unknown one, entries of
  // each width, integers of every size, bodies of several lengths.
  FrameContent content;
  content.roster_version = 300;
  content.prune = {Entry{RecordKind::report, 5, 98, 0}};
  content.graft = {Entry{RecordKind::report, 70000, 1ull << 33, 0}};
  content.ihave = {Entry{RecordKind::roster, 0, 42, 0}, Entry{RecordKind::report, 200, 65536, 0}};
  content.sync = std::vector<Entry>{Entry{RecordKind::report, 1, 7, 0xdeadbeef}};
  content.sync_reply = std::vector<Entry>{Entry{RecordKind::report, 2, 8, 3}};
  content.summary = Summary{1ull << 41, {}};
  content.bodies = {Body::owned(false, text("abc")), Body::owned(true, Bytes(300, 0x42))};
  const Bytes valid = encode_frame_content(content);
  REQUIRE(decode_frame_content(valid).ok());

  std::uint64_t state = 0x9e3779b97f4a7c15ull;
  auto next = [&] {
    state ^= state << 13;
    state ^= state >> 7;
    state ^= state << 17;
    return state;
  };
  int decoded = 0;
  for (int round = 0; round < 20000; ++round) {
    Bytes mutated = valid;
    for (int edits = 1 + static_cast<int>(next() % 3); edits > 0 && !mutated.empty(); --edits) {
      const std::size_t at = next() % mutated.size();
      switch (next() % 4) {
        case 0: mutated[at] ^= static_cast<std::uint8_t>(1u << (next() % 8)); break;
        case 1: mutated[at] = static_cast<std::uint8_t>(next()); break;
        case 2: mutated.resize(at); break;
        default: mutated.insert(mutated.begin() + static_cast<std::ptrdiff_t>(at), static_cast<std::uint8_t>(next()));
      }
    }
    auto result = decode_frame_content(mutated);
    if (!result.ok()) continue;
    ++decoded;
    // Bodies view into the input; lists respect their bounds.
    for (const Body& body : result->bodies) {
      CHECK(body.raw.data() >= mutated.data());
      CHECK(body.raw.data() + body.raw.size() <= mutated.data() + mutated.size());
    }
    // Re-encoding what decoded gives content that decodes to the same again.
    const Bytes again = encode_frame_content(*result);
    auto second = decode_frame_content(again);
    REQUIRE(second.ok());
    CHECK(second->roster_version == result->roster_version);
    CHECK(second->prune == result->prune);
    CHECK(second->graft == result->graft);
    CHECK(second->ihave == result->ihave);
    CHECK(second->sync == result->sync);
    CHECK(second->sync_reply == result->sync_reply);
    CHECK(second->summary == result->summary);
    REQUIRE(second->bodies.size() == result->bodies.size());
    for (std::size_t i = 0; i < second->bodies.size(); ++i) {
      CHECK(second->bodies[i].repair == result->bodies[i].repair);
      CHECK(std::ranges::equal(second->bodies[i].raw, result->bodies[i].raw));
    }
  }
  // Some mutations still decode (a flipped integer, a changed body byte).
  CHECK(decoded > 100);
}

}  // namespace
}  // namespace mesh::gossip

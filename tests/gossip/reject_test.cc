// Every rejection path of the core: each bad input is counted under its own
// counter and persists nothing (the held record set and digest stay as they were).
#include <doctest/doctest.h>

#include <algorithm>

#include "gossip/link.h"
#include "gossip/wire.h"
#include "tests/gossip/fixture.h"

namespace mesh::gossip {
namespace {

using namespace testing;

// A core for s0 in a roster of s0..s3, holding the roster and s1's report seq 5.
struct Node {
  Node() : core(config_for(0), 7) {
    const Bytes roster_raw = signed_roster(make_roster(1, 4));
    REQUIRE(core.publish(roster_raw, kStartMs).ok());
    REQUIRE(core.publish(signed_report(1, 5, kStartMs), kStartMs).ok());
    digest_before = core.digest();
    count_before = core.record_count();
  }

  // Delivers `raw` inside a PUSH from member s<from>, sealed properly.
  Effects deliver(const Bytes& raw, std::uint32_t from = 1, std::uint64_t version = 1) {
    FrameContent content;
    content.roster_version = version;
    content.bodies.push_back(Body::owned(false, raw));
    return deliver_content(content, from);
  }
  Effects deliver_content(const FrameContent& content, std::uint32_t from = 1) {
    LinkCrypto link(test_key(from).secret_key, ++boot);
    auto frame = link.seal(test_key(0).public_key, encode_frame_content(content));
    REQUIRE(frame.ok());
    return core.on_message(*frame, kStartMs);
  }

  void check_unchanged(const Effects& effects) {
    CHECK(effects.persist.empty());
    CHECK(effects.erase.empty());
    CHECK_FALSE(effects.roster_changed);
    CHECK(core.digest() == digest_before);
    CHECK(core.record_count() == count_before);
  }

  GossipCore core;
  Digest digest_before{};
  std::size_t count_before = 0;
  std::uint64_t boot = 100;
};

TEST_CASE("a valid record from the network is accepted and persisted") {
  Node node;
  const Bytes raw = signed_report(2, 1, kStartMs);
  const Effects effects = node.deliver(raw);
  REQUIRE(effects.persist.size() == 1);
  CHECK(*effects.persist[0].raw == raw);
  CHECK(node.core.counters().records_accepted == 3);
  CHECK(node.core.record_count() == node.count_before + 1);
  CHECK(node.core.digest() != node.digest_before);
  CHECK(node.core.held_seq(RecordKind::report, "s2") == 1u);
}

TEST_CASE("forged signature: a member's report signed by another key") {
  Node node;
  const SecretKey stranger = stranger_key().secret_key;
  const Bytes forged = signed_report(2, 1, kStartMs, 1, 10, &stranger);
  node.check_unchanged(node.deliver(forged));
  CHECK(node.core.counters().records_bad_signature == 1);
  auto published = node.core.publish(forged, kStartMs);
  REQUIRE_FALSE(published.ok());
  CHECK(published.code() == RecordError::bad_signature);
  CHECK(node.core.counters().records_bad_signature == 2);
}

TEST_CASE("tampered body: one payload byte changed after signing") {
  Node node;
  Bytes raw = signed_report(2, 1, kStartMs, 1, 0x41);
  auto envelope = decode_envelope(raw);
  REQUIRE(envelope.ok());
  // Flip a byte inside the payload (a bin field: the structure stays valid).
  const Bytes& payload = envelope->payload;
  auto at = std::search(raw.begin(), raw.end(), payload.begin(), payload.end());
  REQUIRE(at != raw.end());
  *(at + static_cast<std::ptrdiff_t>(payload.size()) - 1) ^= 0x01;
  node.check_unchanged(node.deliver(raw));
  CHECK(node.core.counters().records_bad_signature == 1);
}

TEST_CASE("replayed record: an older seq is stale, the same record a duplicate") {
  Node node;
  node.check_unchanged(node.deliver(signed_report(1, 4, kStartMs)));
  CHECK(node.core.counters().records_stale == 1);
  node.check_unchanged(node.deliver(signed_report(1, 5, kStartMs)));
  CHECK(node.core.counters().records_duplicate == 1);
  CHECK(node.core.counters().records_bad_signature == 0);  // refused before any signature check
}

TEST_CASE("equal-seq equivocation: the smaller raw bytes win, in either order") {
  const Bytes a = signed_report(2, 9, kStartMs, 1, 100);
  const Bytes b = signed_report(2, 9, kStartMs, 1, 200);
  REQUIRE(a != b);
  const Bytes& smaller = std::min(a, b);
  const Bytes& larger = std::max(a, b);
  Node first_small, first_large;
  CHECK(first_small.deliver(smaller).persist.size() == 1);
  first_small.digest_before = first_small.core.digest();
  first_small.count_before = first_small.core.record_count();
  first_small.check_unchanged(first_small.deliver(larger));
  CHECK(first_small.core.counters().records_stale == 1);

  CHECK(first_large.deliver(larger).persist.size() == 1);
  const Effects replaced = first_large.deliver(smaller);
  REQUIRE(replaced.persist.size() == 1);
  CHECK(*replaced.persist[0].raw == smaller);
  CHECK(first_large.core.counters().records_equivocation_won == 1);
  CHECK(first_large.core.digest() == first_small.core.digest());
}

TEST_CASE("future-dated beyond the skew bound") {
  Node node;
  const DurationMs skew = Parameters{}.max_clock_skew_ms;
  node.check_unchanged(node.deliver(signed_report(2, 1, kStartMs + skew + 1)));
  CHECK(node.core.counters().records_future == 1);
  CHECK(node.deliver(signed_report(2, 1, kStartMs + skew)).persist.size() == 1);  // at the bound: fine
}

TEST_CASE("report from an origin not in the roster") {
  Node node;
  node.check_unchanged(node.deliver(signed_report(9, 1, kStartMs)));
  CHECK(node.core.counters().records_unknown_origin == 1);
}

TEST_CASE("report before any roster is held") {
  GossipCore core(config_for(0), 1);
  auto published = core.publish(signed_report(1, 1, kStartMs), kStartMs);
  REQUIRE_FALSE(published.ok());
  CHECK(core.counters().records_no_roster == 1);
  CHECK(core.record_count() == 0);
}

TEST_CASE("malformed and oversize records") {
  Node node;
  node.check_unchanged(node.deliver(Bytes{0x93, 0x01, 0x02, 0x03}));
  CHECK(node.core.counters().records_malformed == 1);
  auto oversize = node.core.publish(Bytes(kRecordBytesMax + 1, 0), kStartMs);
  REQUIRE_FALSE(oversize.ok());
  CHECK(oversize.code() == RecordError::oversize);
  CHECK(node.core.counters().records_oversize == 1);
}

TEST_CASE("roster signed by a non-operator key") {
  Node node;
  const Bytes forged = signed_roster(make_roster(2, 5), kStartMs, stranger_key().secret_key);
  node.check_unchanged(node.deliver(forged));
  CHECK(node.core.counters().records_bad_signature == 1);
  CHECK(node.core.roster()->version == 1);
}

TEST_CASE("roster from an origin other than \"operator\" is refused at decode") {
  Node node;
  Bytes raw = signed_roster(make_roster(2, 4));
  const std::string origin = kOperatorOrigin;
  auto at = std::search(raw.begin(), raw.end(), origin.begin(), origin.end());
  REQUIRE(at != raw.end());
  std::copy_n("s1abcdef", origin.size(), at);  // same length: the layout stays intact
  node.check_unchanged(node.deliver(raw));
  CHECK(node.core.counters().records_malformed == 1);
  CHECK(node.core.roster()->version == 1);
}

TEST_CASE("older roster, and an equal-version different roster") {
  Node node;
  REQUIRE(node.core.publish(signed_roster(make_roster(3, 4)), kStartMs).ok());
  node.digest_before = node.core.digest();
  node.count_before = node.core.record_count();
  node.check_unchanged(node.deliver(signed_roster(make_roster(2, 4)), 1, 3));
  CHECK(node.core.counters().records_stale == 1);
  // Version 3 again with other content (a fifth server): the tie-break decides.
  const Bytes held = signed_roster(make_roster(3, 4));
  const Bytes other = signed_roster(make_roster(3, 5));
  const Effects effects = node.deliver(other, 1, 3);
  if (other < held) {
    CHECK(effects.persist.size() == 1);
    CHECK(node.core.counters().records_equivocation_won == 1);
  } else {
    node.check_unchanged(effects);
    CHECK(node.core.counters().records_stale == 2);
  }
}

TEST_CASE("a roster removing a server drops its report, and says so") {
  Node node;
  REQUIRE(node.deliver(signed_report(3, 1, kStartMs)).persist.size() == 1);
  CHECK(node.core.record_count() == 3);
  // Version 2 keeps s0..s2 and drops s3.
  const Effects effects = node.deliver(signed_roster(make_roster(2, 3)));
  CHECK(effects.roster_changed);
  REQUIRE(effects.erase.size() == 1);
  CHECK(effects.erase[0] == std::make_pair(RecordKind::report, ServerId("s3")));
  CHECK(node.core.record_count() == 2);  // roster v2 and s1's report
  CHECK(node.core.counters().records_erased == 1);
  CHECK_FALSE(node.core.held_seq(RecordKind::report, "s3").has_value());
  // s3's reports are now refused.
  node.digest_before = node.core.digest();
  node.count_before = node.core.record_count();
  node.check_unchanged(node.deliver(signed_report(3, 2, kStartMs)));
  CHECK(node.core.counters().records_unknown_origin == 1);
}

TEST_CASE("oversize frame") {
  Node node;
  node.check_unchanged(node.core.on_message(Bytes(kFrameBytesMax + 1, kFrameMagic), kStartMs));
  CHECK(node.core.counters().frames_oversize == 1);
}

TEST_CASE("malformed frames: bad header, and bad plaintext under a valid seal") {
  Node node;
  node.check_unchanged(node.core.on_message(Bytes{kFrameMagic, 0x00}, kStartMs));
  node.check_unchanged(node.core.on_message(Bytes(80, 0x07), kStartMs));
  CHECK(node.core.counters().frames_malformed == 2);
  LinkCrypto link(test_key(1).secret_key, 1);
  auto frame = link.seal(test_key(0).public_key, Bytes{0x92, 0x01, 0x91, 0xc0});
  node.check_unchanged(node.core.on_message(*frame, kStartMs));
  CHECK(node.core.counters().frames_malformed == 3);
  // A report from s1 sealed properly, its boot counter 1 then re-written in
  // two bytes (81 00): the same value, not its shortest varint. Refused as
  // malformed before any key is tried, nothing stored.
  FrameContent content;
  content.roster_version = 1;
  content.bodies.push_back(Body::owned(false, signed_report(1, 1, kStartMs)));
  auto sealed = link.seal(test_key(0).public_key, encode_frame_content(content));
  REQUIRE(sealed.ok());
  REQUIRE((*sealed)[1 + kKeyIdBytes] == 0x01);
  Bytes overlong(sealed->begin(), sealed->begin() + 1 + kKeyIdBytes);
  overlong.insert(overlong.end(), {0x81, 0x00});
  overlong.insert(overlong.end(), sealed->begin() + 2 + kKeyIdBytes, sealed->end());
  node.check_unchanged(node.core.on_message(overlong, kStartMs));
  CHECK(node.core.counters().frames_malformed == 4);
  CHECK(node.core.counters().frames_undecryptable == 0);
}

TEST_CASE("frame from a non-member key") {
  Node node;
  LinkCrypto link(stranger_key().secret_key, 1);
  FrameContent content;
  content.roster_version = 1;
  content.bodies.push_back(Body::owned(false, signed_report(2, 1, kStartMs)));
  auto frame = link.seal(test_key(0).public_key, encode_frame_content(content));
  node.check_unchanged(node.core.on_message(*frame, kStartMs));
  CHECK(node.core.counters().frames_unknown_sender == 1);
}

TEST_CASE("two members share a key id: the AEAD tells them apart") {
  // s1's roster key starts with the same 4 bytes as s4's (the key id frames
  // carry) and differs after them, so s1 is the first candidate for s4's
  // frames. A frame from s4 must still open, and one that neither sealed
  // must not.
  Roster roster = make_roster(1, 5);
  roster.servers[1].key = roster.servers[4].key;
  roster.servers[1].key[31] ^= 0x01;
  GossipCore core(config_for(0), 3);
  REQUIRE(core.publish(signed_roster(roster), kStartMs).ok());
  FrameContent content;
  content.roster_version = 1;
  content.bodies.push_back(Body::owned(false, signed_report(4, 1, kStartMs)));
  LinkCrypto s4(test_key(4).secret_key, 1);
  auto frame = s4.seal(test_key(0).public_key, encode_frame_content(content));
  CHECK(core.on_message(*frame, kStartMs).persist.size() == 1);
  CHECK(core.counters().frames_undecryptable == 0);
  // s4's key id on a frame a stranger sealed: neither candidate opens it.
  // (Boot 2: a fresh nonce, so the replay window does not stop it first.)
  LinkCrypto stranger(stranger_key().secret_key, 2);
  auto forged = stranger.seal(test_key(0).public_key, encode_frame_content(content));
  std::copy(frame->begin() + 1, frame->begin() + 1 + kKeyIdBytes, forged->begin() + 1);
  CHECK(core.on_message(*forged, kStartMs).persist.empty());
  CHECK(core.counters().frames_received == 2);
  CHECK(core.counters().frames_undecryptable == 1);
}

TEST_CASE("frame sealed for another node") {
  Node node;
  LinkCrypto link(test_key(1).secret_key, 1);
  FrameContent content;
  content.roster_version = 1;
  content.bodies.push_back(Body::owned(false, signed_report(2, 1, kStartMs)));
  auto frame = link.seal(test_key(2).public_key, encode_frame_content(content));
  node.check_unchanged(node.core.on_message(*frame, kStartMs));
  CHECK(node.core.counters().frames_undecryptable == 1);
}

TEST_CASE("replayed frame: the same nonce twice") {
  Node node;
  LinkCrypto link(test_key(1).secret_key, 1);
  FrameContent content;
  content.roster_version = 1;
  content.bodies.push_back(Body::owned(false, signed_report(2, 1, kStartMs)));
  auto frame = link.seal(test_key(0).public_key, encode_frame_content(content));
  CHECK(node.core.on_message(*frame, kStartMs).persist.size() == 1);
  node.digest_before = node.core.digest();
  node.count_before = node.core.record_count();
  node.check_unchanged(node.core.on_message(*frame, kStartMs));
  CHECK(node.core.counters().frames_replayed == 1);
}

TEST_CASE("no frame can be opened before a roster is held") {
  GossipCore core(config_for(0), 1);
  LinkCrypto link(test_key(1).secret_key, 1);
  auto frame = link.seal(test_key(0).public_key, Bytes{0x92, 0x01, 0x90});
  const Effects effects = core.on_message(*frame, kStartMs);
  CHECK(effects.persist.empty());
  CHECK(core.counters().frames_no_roster == 1);
}

TEST_CASE("hostile SUMMARY: another roster's is ignored, an absurd cutoff is clamped, a flood is answered once") {
  Node node;
  FrameContent content;
  content.summary = Summary{UINT64_MAX, {}};  // a cutoff past INT64_MAX, a digest nobody has
  // Origin indices are the sender's: on another roster version it is not read.
  content.roster_version = 2;
  node.check_unchanged(node.deliver_content(content));
  CHECK(node.core.counters().summaries_received == 0);
  CHECK(node.core.counters().syncs_sent == 0);
  // On ours: the cutoff takes every record, the sets differ, s1 gets one SYNC;
  // the next four within half a round are counted and not hashed again.
  content.roster_version = 1;
  for (int i = 0; i < 5; ++i) node.check_unchanged(node.deliver_content(content, 1));
  CHECK(node.core.counters().summaries_received == 5);
  CHECK(node.core.counters().summaries_throttled == 4);
  CHECK(node.core.counters().summaries_matched == 0);
  CHECK(node.core.counters().syncs_sent == 1);
  // An honest summary from s2 of the same set matches: nothing is sent back.
  content.summary = Summary{static_cast<std::uint64_t>(kStartMs), node.core.summary(kStartMs)};
  node.check_unchanged(node.deliver_content(content, 2));
  CHECK(node.core.counters().summaries_matched == 1);
  CHECK(node.core.counters().syncs_sent == 1);
  // The next tick's frame to s1 carries s0's SYNC list: the roster and s1's report.
  const Effects tick = node.core.on_tick(kStartMs + 1'000);
  auto to_s1 = std::find_if(tick.send.begin(), tick.send.end(), [](const Outgoing& out) { return out.to == 1; });
  REQUIRE(to_s1 != tick.send.end());
  LinkCrypto s1(test_key(1).secret_key, 1);
  auto plaintext = s1.open(test_key(0).public_key, *parse_frame_header(to_s1->frame), to_s1->frame);
  REQUIRE(plaintext.ok());
  auto sent = decode_frame_content(*plaintext);
  REQUIRE(sent.ok());
  REQUIRE(sent->sync.has_value());
  CHECK(sent->sync->size() == 2);
}

TEST_CASE("random garbage, raw or properly sealed, is counted and never crashes") {
  Node node;
  Rng rng(12345);
  LinkCrypto link(test_key(1).secret_key, 999);
  std::uint64_t refused = 0;
  for (int i = 0; i < 2000; ++i) {
    Bytes junk(rng.below(300));
    for (auto& byte : junk) byte = static_cast<std::uint8_t>(rng.next());
    if (i % 2 == 0 && !junk.empty()) junk[0] = kFrameMagic;
    node.check_unchanged(node.core.on_message(junk, kStartMs));
    // Sealed garbage: passes the link, must fail the message layout. A
    // msgpack prefix makes the decoder go deeper before it refuses.
    Bytes plaintext = {0x92, 0x01, static_cast<std::uint8_t>(0x90 + rng.below(16))};
    plaintext.insert(plaintext.end(), junk.begin(), junk.end());
    auto sealed = link.seal(test_key(0).public_key, plaintext);
    const Effects effects = node.core.on_message(*sealed, kStartMs);
    CHECK(effects.persist.empty());
    refused += 1;
  }
  const Counters& c = node.core.counters();
  CHECK(c.frames_received == 2 * refused);
  CHECK(c.records_accepted == 2);  // the roster and s1's report from the fixture
  CHECK(node.core.record_count() == node.count_before);
}

TEST_CASE("load re-verifies stored records and erases what no longer holds") {
  GossipCore core(config_for(0), 1);
  const SecretKey stranger = stranger_key().secret_key;
  const std::vector<Bytes> stored = {
      signed_report(1, 3, kStartMs),                    // before its roster in the list
      signed_report(2, 3, kStartMs, 1, 10, &stranger),  // bad signature
      signed_report(9, 3, kStartMs),                    // not a member
      signed_roster(make_roster(1, 4)),
  };
  const Effects effects = core.load(stored, kStartMs);
  CHECK(effects.persist.empty());
  CHECK(core.record_count() == 2);
  CHECK(core.held_seq(RecordKind::report, "s1") == 3u);
  REQUIRE(effects.erase.size() == 2);
  CHECK(effects.erase[0].second == "s2");
  CHECK(effects.erase[1].second == "s9");
}

}  // namespace
}  // namespace mesh::gossip

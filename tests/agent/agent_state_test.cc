// What an agent stores and how a restarted one resumes (docs/STORAGE.md,
// "Agent state"): records, probe streaks, its report numbering, today's
// volume account; and the clear error for a stored value that is not ours.
#include <doctest/doctest.h>

#include "node/agent/state_codec.h"
#include "tests/agent/fleet.h"

namespace mesh::agent::testing {
namespace {

TEST_CASE("a killed agent restarts where it was: records, streaks, report seq, volume") {
  Fleet fleet(4, small_roster(4));
  fleet.probe_outcome = [](std::uint32_t, const ProbeRequest& request) {
    return request.target == "s3" ? ProbeFailure::tcp_refused : ProbeFailure::none;
  };
  fleet.run_for(60'000);
  // The streaks stored with the last report are what a restart resumes.
  const std::uint64_t seq = *fleet.agent(0).core().held_seq(RecordKind::report, "s0");
  const std::size_t records = fleet.agent(0).core().record_count();
  const VolumeStatus volume = fleet.agent(0).volume();
  fleet.kill(0);
  fleet.start(0);
  Agent& restarted = fleet.agent(0);
  CHECK(restarted.core().record_count() == records);
  CHECK(*restarted.core().held_seq(RecordKind::report, "s0") == seq);
  const verdict::TargetStreak* failing = restarted.ledger().find("s3");
  REQUIRE(failing != nullptr);
  CHECK(failing->fail_streak >= 3);  // not reset to zero
  CHECK(failing->reason == ProbeFailure::tcp_refused);
  // The stored account is an upper bound of what was spent, never less.
  CHECK(restarted.volume().charged_bytes >= volume.charged_bytes);
  fleet.run_for(20'000);
  CHECK(*restarted.core().held_seq(RecordKind::report, "s0") > seq);
  CHECK(restarted.ledger().find("s3")->fail_streak > failing->fail_streak - 1);
}

TEST_CASE("flush() stores every changed streak and the exact volume account") {
  Fleet fleet(3, small_roster(3));
  fleet.run_for(25'000);
  AgentEffects flushed = fleet.agent(1).flush(fleet.now);
  bool volume = false;
  for (const auto& [key, value] : flushed.store.put_state) {
    if (key == kVolumeKey) {
      volume = true;
      const auto record = decode_volume(value);
      REQUIRE(record.has_value());
      CHECK(record->charged_bytes == fleet.agent(1).volume().charged_bytes);
    }
  }
  CHECK(volume);
}

TEST_CASE("a stored agent value that does not decode is a clear error, and nothing changes") {
  const Roster roster = small_roster(3);
  for (const auto& [key, value] :
       std::vector<std::pair<std::string, Bytes>>{{"probe/s1", Bytes{1, 2, 3}},
                                                   {"probe/S1 bad id", encode_streak(verdict::TargetStreak{"x", 1, 0, 1, 0, ProbeFailure::tcp_timeout, 1})},
                                                   {"agent/volume", Bytes(41, 9)}}) {
    CAPTURE(key);
    StoredState stored;
    stored.records.push_back(gossip::testing::signed_roster(roster));
    stored.state[key] = value;
    Agent agent(agent_config(0), 1);
    auto started = agent.start(stored, kStartMs);
    REQUIRE(!started.ok());
    CHECK(started.code() == AgentError::corrupt_state);
    CHECK(started.message().find(key) != std::string::npos);
    CHECK(agent.roster() == nullptr);  // the records were not even loaded
    CHECK(agent.ledger().size() == 0);
  }
}

TEST_CASE("streak and volume codecs: round trip, and strict about length and format") {
  verdict::TargetStreak streak{"de-1", 4, 0, kStartMs, kStartMs - 60'000, ProbeFailure::tls_reset, 77};
  streak.failing_since_ms = kStartMs - 30'000;
  streak.answers = 1;  // one answer of two
  CHECK(decode_streak("de-1", encode_streak(streak)) == streak);
  streak.answers = verdict::kAnswersToConfirm;
  streak.answered = true;
  const Bytes encoded = encode_streak(streak);
  CHECK(encoded.size() == 43);
  CHECK(decode_streak("de-1", encoded) == streak);
  Bytes longer = encoded;
  longer.push_back(0);
  CHECK(!decode_streak("de-1", longer));
  Bytes other_format = encoded;
  other_format[0] = 3;
  CHECK(!decode_streak("de-1", other_format));
  Bytes bad_reason = encoded;
  bad_reason[25] = 200;
  CHECK(!decode_streak("de-1", bad_reason));
  Bytes bad_answered = encoded;
  bad_answered.back() = 3;
  CHECK(!decode_streak("de-1", bad_answered));
  // Format 1 (34 bytes, no failing_since_ms nor answered) is still read: a
  // failing streak of it began at its last probe, unanswered.
  Bytes v1(encoded.begin(), encoded.begin() + 34);
  v1[0] = 1;
  auto old = decode_streak("de-1", v1);
  REQUIRE(old.has_value());
  CHECK(old->failing_since_ms == kStartMs);
  CHECK_FALSE(old->answered);
  CHECK(old->fail_streak == 4);
  Bytes v1_as_v2 = v1;
  v1_as_v2[0] = 2;  // a format 2 byte on 34 bytes
  CHECK(!decode_streak("de-1", v1_as_v2));

  const VolumeRecord volume{20'000, 5'000, 3'000, 2'000, 9'000};
  CHECK(decode_volume(encode_volume(volume)) == volume);
  VolumeRecord inconsistent = volume;
  inconsistent.charged_bytes = 100;  // less than probes + sent
  CHECK(!decode_volume(encode_volume(inconsistent)));
  CHECK(streak_key("de-1") == "probe/de-1");
  CHECK(streak_target("probe/de-1") == std::string_view("de-1"));
  CHECK(!streak_target("agent/volume"));
}

TEST_CASE("a roster that drops a target forgets its stored streak") {
  Fleet fleet(4, small_roster(4));
  fleet.run_for(40'000);
  REQUIRE(fleet.agent(0).ledger().find("s3") != nullptr);
  Roster smaller = small_roster(3, 1, 2);
  auto offered = fleet.agent(0).offer_record(gossip::testing::signed_roster(smaller, fleet.now), fleet.now);
  REQUIRE(offered.ok());
  CHECK(offered->roster_changed);
  CHECK(fleet.agent(0).ledger().find("s3") == nullptr);
  const auto& erased = offered->store.erase_state;
  CHECK(std::find(erased.begin(), erased.end(), "probe/s3") != erased.end());
  bool report_erased = false;
  for (const auto& [kind, origin] : offered->store.erase_records) report_erased |= origin == "s3";
  CHECK(report_erased);
}

}  // namespace
}  // namespace mesh::agent::testing

// Round trips, ordering, overwrite, delete and bad input through ReadTxn and
// WriteTxn, against real LMDB in a fresh directory per test.
#include <string>
#include <utility>
#include <vector>

#include "storage/layout.h"
#include "tests/storage/test_util.h"

namespace mesh::test {
namespace {

constexpr std::uint8_t kRoster = 1;
constexpr std::uint8_t kReport = 2;

void commit_ok(WriteTxn& txn) {
  auto committed = txn.commit();
  std::string why = committed.ok() ? std::string() : committed.message();
  INFO(why);
  REQUIRE(committed.ok());
}

struct Seen {
  std::uint8_t kind;
  std::string origin;
  Bytes record;
  bool operator==(const Seen&) const = default;
};

std::vector<Seen> all_records(const TxnReader& txn) {
  std::vector<Seen> seen;
  auto status = txn.for_each_record([&](std::uint8_t kind, std::string_view origin, ByteView r) {
    seen.push_back({kind, std::string(origin), Bytes(r.begin(), r.end())});
  });
  REQUIRE(status.ok());
  return seen;
}

TEST_CASE("records, roster and state survive a reopen byte for byte") {
  TempDir dir;
  {
    auto store = open_ok(dir.path());
    auto txn = store->begin_write();
    REQUIRE(txn.ok());
    REQUIRE(txn->put_record(kReport, "de-fra-1", filler(300, 1)).ok());
    REQUIRE(txn->put_roster(filler(5000, 2)).ok());
    REQUIRE(txn->put_state("probe/nl-ams-1", filler(12, 3)).ok());
    REQUIRE(txn->put_state("empty", ByteView()).ok());
    commit_ok(*txn);
  }
  auto store = open_ok(dir.path());
  auto txn = store->begin_read();
  REQUIRE(txn.ok());
  CHECK(txn->get_record(kReport, "de-fra-1").value() == filler(300, 1));
  CHECK(txn->get_roster().value() == filler(5000, 2));
  CHECK(txn->get_state("probe/nl-ams-1").value() == filler(12, 3));
  CHECK(txn->get_state("empty").value() == Bytes());
  // Absent keys, and the same origin under another kind, are nullopt.
  CHECK_FALSE(txn->get_record(kRoster, "de-fra-1").value().has_value());
  CHECK_FALSE(txn->get_record(kReport, "de-fra-2").value().has_value());
  CHECK_FALSE(txn->get_state("probe/nl-ams-2").value().has_value());
  auto view = txn->find_record(kReport, "de-fra-1");
  REQUIRE(view.ok());
  REQUIRE(view.value().has_value());
  CHECK(Bytes(view.value()->begin(), view.value()->end()) == filler(300, 1));
}

TEST_CASE("a fresh store holds nothing") {
  TempDir dir;
  auto store = open_ok(dir.sub("fresh"));
  auto txn = store->begin_read();
  REQUIRE(txn.ok());
  CHECK(all_records(*txn).empty());
  CHECK_FALSE(txn->get_roster().value().has_value());
  CHECK_FALSE(txn->get_state("boot_counter").value().has_value());
}

TEST_CASE("for_each_state visits every state value in key order, with its bytes") {
  TempDir dir;
  auto store = open_ok(dir.path());
  {
    auto txn = store->begin_write();
    REQUIRE(txn.ok());
    REQUIRE(txn->put_state("probe/b", filler(34, 1)).ok());
    REQUIRE(txn->put_state("agent/volume", filler(41, 2)).ok());
    REQUIRE(txn->put_state("probe/a", Bytes{}).ok());
    commit_ok(*txn);
  }
  auto txn = store->begin_read();
  REQUIRE(txn.ok());
  std::vector<std::pair<std::string, Bytes>> seen;
  auto status = txn->for_each_state([&](std::string_view key, ByteView value) {
    seen.emplace_back(std::string(key), Bytes(value.begin(), value.end()));
  });
  REQUIRE(status.ok());
  const std::vector<std::pair<std::string, Bytes>> expected = {
      {"agent/volume", filler(41, 2)}, {"probe/a", Bytes{}}, {"probe/b", filler(34, 1)}};
  CHECK(seen == expected);
}

TEST_CASE("for_each_record visits in key order: kind, then origin bytewise") {
  TempDir dir;
  auto store = open_ok(dir.path());
  // Inserted out of order on purpose.
  std::vector<std::pair<std::uint8_t, std::string>> keys = {
      {kReport, "nl-ams-1"}, {kRoster, "operator"}, {kReport, "b"},       {7, "a"},
      {kReport, "a"},        {kReport, "ab"},       {kReport, "a-"},      {0, "z"}};
  {
    auto txn = store->begin_write();
    REQUIRE(txn.ok());
    for (std::size_t i = 0; i < keys.size(); ++i) {
      REQUIRE(txn->put_record(keys[i].first, keys[i].second, filler(10, std::uint8_t(i))).ok());
    }
    commit_ok(*txn);
  }
  auto txn = store->begin_read();
  REQUIRE(txn.ok());
  std::vector<std::pair<std::uint8_t, std::string>> order;
  for (const Seen& s : all_records(*txn)) order.emplace_back(s.kind, s.origin);
  std::vector<std::pair<std::uint8_t, std::string>> expected = {
      {0, "z"},       {kRoster, "operator"}, {kReport, "a"},        {kReport, "a-"},
      {kReport, "ab"}, {kReport, "b"},        {kReport, "nl-ams-1"}, {7, "a"}};
  CHECK(order == expected);

  std::vector<std::string> reports;
  auto status = txn->for_each_record_of_kind(
      kReport, [&](std::uint8_t kind, std::string_view origin, ByteView) {
        CHECK(kind == kReport);
        reports.emplace_back(origin);
      });
  REQUIRE(status.ok());
  CHECK(reports == std::vector<std::string>{"a", "a-", "ab", "b", "nl-ams-1"});
  std::size_t none = 0;
  REQUIRE(txn->for_each_record_of_kind(3, [&](auto, auto, auto) { ++none; }).ok());
  CHECK(none == 0);
}

TEST_CASE("overwrite replaces and delete removes, in every database") {
  TempDir dir;
  auto store = open_ok(dir.path());
  {
    auto txn = store->begin_write();
    REQUIRE(txn.ok());
    REQUIRE(txn->put_record(kReport, "a", filler(100, 1)).ok());
    REQUIRE(txn->put_record(kReport, "b", filler(100, 2)).ok());
    REQUIRE(txn->put_roster(filler(100, 3)).ok());
    REQUIRE(txn->put_state("k", filler(8, 4)).ok());
    commit_ok(*txn);
  }
  {
    auto txn = store->begin_write();
    REQUIRE(txn.ok());
    REQUIRE(txn->put_record(kReport, "a", filler(7, 9)).ok());  // shorter value
    REQUIRE(txn->delete_record(kReport, "b").ok());
    REQUIRE(txn->delete_record(kReport, "never-there").ok());
    REQUIRE(txn->put_roster(filler(2000, 8)).ok());
    REQUIRE(txn->delete_state("k").ok());
    REQUIRE(txn->delete_state("never-there").ok());
    // The write transaction reads its own writes.
    CHECK(txn->get_record(kReport, "a").value() == filler(7, 9));
    CHECK_FALSE(txn->get_record(kReport, "b").value().has_value());
    commit_ok(*txn);
  }
  auto txn = store->begin_read();
  REQUIRE(txn.ok());
  CHECK(all_records(*txn) == std::vector<Seen>{{kReport, "a", filler(7, 9)}});
  CHECK(txn->get_roster().value() == filler(2000, 8));
  CHECK_FALSE(txn->get_state("k").value().has_value());
}

TEST_CASE("an uncommitted write transaction leaves nothing behind") {
  TempDir dir;
  auto store = open_ok(dir.path());
  {
    auto txn = store->begin_write();
    REQUIRE(txn.ok());
    REQUIRE(txn->put_record(kReport, "a", filler(10, 1)).ok());
    REQUIRE(txn->put_state("k", filler(10, 2)).ok());
  }  // destroyed without commit: aborted
  auto txn = store->begin_read();
  REQUIRE(txn.ok());
  CHECK(all_records(*txn).empty());
  CHECK_FALSE(txn->get_state("k").value().has_value());
}

TEST_CASE("a read transaction keeps its snapshot while a writer commits") {
  TempDir dir;
  auto store = open_ok(dir.path());
  auto write = [&](std::uint8_t seed) {
    auto txn = store->begin_write();
    REQUIRE(txn.ok());
    REQUIRE(txn->put_state("v", filler(4, seed)).ok());
    commit_ok(*txn);
  };
  write(1);
  auto before = store->begin_read();
  REQUIRE(before.ok());
  write(2);
  auto after = store->begin_read();
  REQUIRE(after.ok());
  CHECK(before->get_state("v").value() == filler(4, 1));
  CHECK(after->get_state("v").value() == filler(4, 2));
}

TEST_CASE("bad input is refused with an error value and nothing is written") {
  TempDir dir;
  {
    auto store = open_ok(dir.path());
    auto txn = store->begin_write();
    REQUIRE(txn.ok());
    REQUIRE(txn->put_record(kReport, "good", filler(10, 1)).ok());

    auto oversize = txn->put_record(kReport, "big", filler(kStoredRecordBytesMax + 1, 2));
    CHECK(oversize.code() == StoreError::too_large);
    CHECK(oversize.message().find(dir.path()) != std::string::npos);
    CHECK(txn->put_roster(filler(kStoredRecordBytesMax + 1, 2)).code() == StoreError::too_large);
    CHECK(txn->put_record(kReport, "", filler(10, 3)).code() == StoreError::invalid_argument);
    CHECK(txn->put_record(kReport, std::string(kOriginBytesMax + 1, 'a'), filler(10, 3)).code() ==
          StoreError::too_large);
    CHECK(txn->put_record(kReport, "empty-record", ByteView()).code() ==
          StoreError::invalid_argument);
    CHECK(txn->put_roster(ByteView()).code() == StoreError::invalid_argument);
    CHECK(txn->put_state("", filler(1, 4)).code() == StoreError::invalid_argument);
    CHECK(txn->put_state(std::string(kStateKeyBytesMax + 1, 'k'), filler(1, 4)).code() ==
          StoreError::too_large);
    CHECK(txn->put_state("big", filler(kStateValueBytesMax + 1, 4)).code() ==
          StoreError::too_large);
    CHECK(txn->delete_record(kReport, "").code() == StoreError::invalid_argument);
    CHECK(txn->delete_state("").code() == StoreError::invalid_argument);
    CHECK(txn->get_record(kReport, "").code() == StoreError::invalid_argument);
    CHECK(txn->get_state("").code() == StoreError::invalid_argument);
    // The largest allowed values still go in; the transaction is still usable.
    REQUIRE(txn->put_record(kReport, std::string(kOriginBytesMax, 'm'),
                            filler(kStoredRecordBytesMax, 5))
                .ok());
    REQUIRE(txn->put_state(std::string(kStateKeyBytesMax, 's'), filler(kStateValueBytesMax, 6))
                .ok());
    commit_ok(*txn);
  }
  auto store = open_ok(dir.path());
  auto txn = store->begin_read();
  REQUIRE(txn.ok());
  std::vector<std::string> origins;
  for (const Seen& s : all_records(*txn)) origins.push_back(s.origin);
  CHECK(origins == std::vector<std::string>{"good", std::string(kOriginBytesMax, 'm')});
  CHECK_FALSE(txn->get_roster().value().has_value());
  CHECK_FALSE(txn->get_state("big").value().has_value());
  CHECK(txn->get_state(std::string(kStateKeyBytesMax, 's')).value() ==
        filler(kStateValueBytesMax, 6));
}

TEST_CASE("map full aborts the transaction cleanly and the store stays usable") {
  TempDir dir;
  auto store = open_ok(dir.path(), read_write_options(256 * 1024));
  {
    auto txn = store->begin_write();
    REQUIRE(txn.ok());
    REQUIRE(txn->put_record(kReport, "early", filler(1000, 1)).ok());
    REQUIRE(txn->put_state("counter", u64_bytes(1)).ok());
    commit_ok(*txn);
  }
  {
    auto txn = store->begin_write();
    REQUIRE(txn.ok());
    Status<StoreError> last = Ok{};
    int written = 0;
    for (; written < 100 && last.ok(); ++written) {
      last = txn->put_record(kReport, "big-" + std::to_string(written), filler(60'000, 2));
    }
    REQUIRE_FALSE(last.ok());
    CHECK(last.code() == StoreError::map_full);
    CHECK(last.message().find("MDB_MAP_FULL") != std::string::npos);
    CHECK(last.message().find(dir.path()) != std::string::npos);
    // The transaction is over: every later call repeats the failure.
    CHECK(txn->put_state("counter", u64_bytes(2)).code() == StoreError::map_full);
    CHECK(txn->get_state("counter").code() == StoreError::map_full);
    CHECK(txn->commit().code() == StoreError::map_full);
  }
  // Earlier commits are intact and a new small transaction commits.
  {
    auto txn = store->begin_write();
    REQUIRE(txn.ok());
    CHECK_FALSE(txn->get_record(kReport, "big-0").value().has_value());
    REQUIRE(txn->put_state("counter", u64_bytes(2)).ok());
    commit_ok(*txn);
  }
  store.reset();
  store = open_ok(dir.path(), read_write_options(256 * 1024));
  auto txn = store->begin_read();
  REQUIRE(txn.ok());
  CHECK(all_records(*txn) == std::vector<Seen>{{kReport, "early", filler(1000, 1)}});
  CHECK(u64_of(*txn->find_state("counter").value()) == 2);
}

TEST_CASE("next_boot_counter counts up from 1 across reopen") {
  TempDir dir;
  {
    auto store = open_ok(dir.path());
    CHECK(store->next_boot_counter().value() == 1);
    CHECK(store->next_boot_counter().value() == 2);
  }
  {
    auto store = open_ok(dir.path());
    CHECK(store->next_boot_counter().value() == 3);
    auto txn = store->begin_read();
    REQUIRE(txn.ok());
    CHECK(u64_of(*txn->find_state(kBootCounterKey).value()) == 3);
  }
  auto store = open_ok(dir.path(), read_only_options());
  CHECK(store->next_boot_counter().code() == StoreError::read_only);
}

TEST_CASE("next_boot_counter rises to its floor, and above the held value whatever the floor") {
  TempDir dir;
  auto store = open_ok(dir.path());
  CHECK(store->next_boot_counter(29'000'000).value() == 29'000'000);  // a fresh store, 2026-12
  CHECK(store->next_boot_counter(29'000'000).value() == 29'000'001);  // twice in a second
  CHECK(store->next_boot_counter(5).value() == 29'000'002);           // a clock set back
  CHECK(store->next_boot_counter(30'000'000).value() == 30'000'000);
}

TEST_CASE("a malformed boot counter is corrupt, not reset") {
  TempDir dir;
  auto store = open_ok(dir.path());
  {
    auto txn = store->begin_write();
    REQUIRE(txn.ok());
    REQUIRE(txn->put_state(kBootCounterKey, filler(3, 1)).ok());
    commit_ok(*txn);
  }
  auto next = store->next_boot_counter();
  CHECK(next.code() == StoreError::corrupt);
  auto txn = store->begin_read();
  REQUIRE(txn.ok());
  CHECK(txn->get_state(kBootCounterKey).value() == filler(3, 1));
}

}  // namespace
}  // namespace mesh::test

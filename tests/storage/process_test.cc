// Real processes against one store: a writer SIGKILLed mid-transaction (crash
// safety) and a read-only process reading snapshots while another process
// commits. Children synchronise through pipes; nothing sleeps or depends on
// timing for its verdict.
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <string>

#include "tests/storage/child_process.h"
#include "tests/storage/test_util.h"

namespace mesh::test {
namespace {

constexpr std::uint8_t kReport = 2;

// In a child: report a failure and give its exit code.
int child_failed(const char* what, const std::string& message) {
  std::fprintf(stderr, "storage test child: %s: %s\n", what, message.c_str());
  return 2;
}

std::string committed_origin(std::uint64_t index) { return "c-" + std::to_string(index); }
Bytes committed_value(std::uint64_t index) {
  return filler(100 + index % 50, static_cast<std::uint8_t>(index));
}

// Child body: commits records first..first+count-1 one transaction each,
// then fills a big transaction that undoes and overwrites things, tells the
// parent it is inside it, and waits to be killed.
int crashing_writer(const std::string& dir, std::uint64_t first, std::uint64_t count,
                    int to_parent) {
  auto store = Store::open(dir, read_write_options(64 << 20));
  if (!store) return child_failed("open", store.message());
  for (std::uint64_t i = first; i < first + count; ++i) {
    auto txn = store.value()->begin_write();
    if (!txn) return child_failed("begin_write", txn.message());
    if (!txn->put_record(kReport, committed_origin(i), committed_value(i)).ok() ||
        !txn->put_state("committed", u64_bytes(i + 1)).ok() || !txn->commit().ok()) {
      return child_failed("commit", "small transaction failed");
    }
  }
  auto big = store.value()->begin_write();
  if (!big) return child_failed("begin_write", big.message());
  for (int j = 0; j < 400; ++j) {
    if (!big->put_record(kReport, "big-" + std::to_string(j), filler(8192, 9)).ok()) {
      return child_failed("big put", "failed");
    }
  }
  if (!big->delete_record(kReport, committed_origin(0)).ok() ||
      !big->put_state("committed", u64_bytes(999'999)).ok() ||
      !big->put_roster(filler(4096, 5)).ok()) {
    return child_failed("big txn", "failed");
  }
  write_byte(to_parent, 1);
  for (;;) ::pause();
}

void check_only_committed(const std::string& dir, std::uint64_t committed) {
  auto store = open_ok(dir, read_write_options(64 << 20));
  auto txn = store->begin_read();
  REQUIRE(txn.ok());
  CHECK(u64_of(*txn->find_state("committed").value()) == committed);
  CHECK_FALSE(txn->get_roster().value().has_value());
  std::uint64_t records = 0;
  auto status = txn->for_each_record([&](std::uint8_t, std::string_view origin, ByteView) {
    CHECK(origin.substr(0, 2) == "c-");
    ++records;
  });
  REQUIRE(status.ok());
  CHECK(records == committed);
  for (std::uint64_t i = 0; i < committed; ++i) {
    CHECK(txn->get_record(kReport, committed_origin(i)).value() == committed_value(i));
  }
}

TEST_CASE("a writer SIGKILLed inside a transaction loses it and nothing committed") {
  TempDir dir;
  std::uint64_t committed = 0;
  for (std::uint64_t round = 0; round < 4; ++round) {
    const std::uint64_t count = 3 + 2 * round;
    Child child([&](int to_parent, int) {
      return crashing_writer(dir.path(), committed, count, to_parent);
    });
    REQUIRE(child.receive());  // the child is inside its big transaction
    child.kill_now();
    int status = child.wait();
    REQUIRE(WIFSIGNALED(status));
    CHECK(WTERMSIG(status) == SIGKILL);
    committed += count;
    check_only_committed(dir.path(), committed);
  }
}

// Child body: commits transactions first, first+1, ... (record "k-<i>" and
// state "last" = i together), acknowledging each commit, until killed.
int endless_writer(const std::string& dir, std::uint64_t first, int to_parent) {
  auto store = Store::open(dir, read_write_options(64 << 20));
  if (!store) return child_failed("open", store.message());
  for (std::uint64_t i = first;; ++i) {
    auto txn = store.value()->begin_write();
    if (!txn) return child_failed("begin_write", txn.message());
    if (!txn->put_record(kReport, "k-" + std::to_string(i), filler(2000, std::uint8_t(i))).ok() ||
        !txn->put_state("last", u64_bytes(i)).ok() || !txn->commit().ok()) {
      return child_failed("commit", "failed");
    }
    write_byte(to_parent, 1);
  }
}

TEST_CASE("a writer SIGKILLed at an arbitrary point keeps every acknowledged commit whole") {
  TempDir dir;
  std::uint64_t next = 0;
  for (int round = 0; round < 3; ++round) {
    constexpr int kAcks = 20;
    Child child([&](int to_parent, int) { return endless_writer(dir.path(), next, to_parent); });
    for (int i = 0; i < kAcks; ++i) REQUIRE(child.receive());
    child.kill_now();  // wherever the child is: mid-transaction, mid-commit
    child.wait();

    auto store = open_ok(dir.path(), read_write_options(64 << 20));
    auto txn = store->begin_read();
    REQUIRE(txn.ok());
    std::uint64_t last = u64_of(*txn->find_state("last").value());
    CHECK(last >= next + kAcks - 1);
    std::uint64_t records = 0;
    REQUIRE(txn->for_each_record([&](auto, auto, auto) { ++records; }).ok());
    CHECK(records == last + 1);  // exactly k-0 .. k-last, all whole
    for (std::uint64_t i = 0; i <= last; ++i) {
      CHECK(txn->get_record(kReport, "k-" + std::to_string(i)).value() ==
            filler(2000, std::uint8_t(i)));
    }
    next = last + 1;
  }
}

constexpr int kCounterRecords = 10;
constexpr std::uint64_t kLockstepTxns = 10;
constexpr std::uint64_t kTotalTxns = 300;

// Transaction i: every "r-<j>" and state "counter" hold i; "even" exists
// (holding i) exactly when i is even.
bool write_generation(Store& store, std::uint64_t i) {
  auto txn = store.begin_write();
  if (!txn) return false;
  bool ok = txn->put_state("counter", u64_bytes(i)).ok();
  for (int j = 0; j < kCounterRecords && ok; ++j) {
    ok = txn->put_record(kReport, "r-" + std::to_string(j), u64_bytes(i)).ok();
  }
  if (ok) {
    ok = i % 2 == 0 ? txn->put_record(kReport, "even", u64_bytes(i)).ok()
                    : txn->delete_record(kReport, "even").ok();
  }
  return ok && txn->commit().ok();
}

int generation_writer(const std::string& dir, int to_parent, int from_parent) {
  auto store = Store::open(dir, read_write_options());
  if (!store) return child_failed("open", store.message());
  if (!write_generation(*store.value(), 0)) return child_failed("write", "generation 0");
  write_byte(to_parent, 1);
  for (std::uint64_t i = 1; i <= kLockstepTxns; ++i) {
    if (!read_byte(from_parent)) return child_failed("lockstep", "parent went away");
    if (!write_generation(*store.value(), i)) return child_failed("write", "lockstep");
    write_byte(to_parent, 1);
  }
  if (!read_byte(from_parent)) return child_failed("free run", "parent went away");
  for (std::uint64_t i = kLockstepTxns + 1; i < kTotalTxns; ++i) {
    if (!write_generation(*store.value(), i)) return child_failed("write", "free run");
  }
  return 0;
}

// Checks that one snapshot is internally consistent; returns its generation.
std::uint64_t check_snapshot(const ReadTxn& txn) {
  std::uint64_t counter = u64_of(*txn.find_state("counter").value());
  int counted = 0;
  bool even_seen = false;
  auto status = txn.for_each_record([&](std::uint8_t, std::string_view origin, ByteView value) {
    CHECK(u64_of(value) == counter);
    if (origin == "even") even_seen = true;
    else ++counted;
  });
  REQUIRE(status.ok());
  CHECK(counted == kCounterRecords);
  CHECK(even_seen == (counter % 2 == 0));
  return counter;
}

TEST_CASE("a read-only process sees consistent snapshots while another process commits") {
  TempDir dir;
  Child child([&](int to_parent, int from_parent) {
    return generation_writer(dir.path(), to_parent, from_parent);
  });
  REQUIRE(child.receive());
  auto store = open_ok(dir.path(), read_only_options());
  {
    auto first = store->begin_read();
    REQUIRE(first.ok());
    CHECK(check_snapshot(*first) == 0);
  }
  // Lockstep: a snapshot taken before a commit keeps seeing the old state.
  for (std::uint64_t i = 1; i <= kLockstepTxns; ++i) {
    auto before = store->begin_read();
    REQUIRE(before.ok());
    REQUIRE(child.send());
    REQUIRE(child.receive());
    auto after = store->begin_read();
    REQUIRE(after.ok());
    CHECK(check_snapshot(*before) == i - 1);
    CHECK(check_snapshot(*after) == i);
  }
  // Free run: read as fast as possible while the child commits.
  REQUIRE(child.send());
  std::uint64_t previous = kLockstepTxns;
  int status = 0;
  bool done = false;
  while (!done) {
    done = child.exited(&status);  // checked before reading: the last read sees the end
    auto txn = store->begin_read();
    REQUIRE(txn.ok());
    std::uint64_t generation = check_snapshot(*txn);
    CHECK(generation >= previous);
    previous = generation;
  }
  REQUIRE(WIFEXITED(status));
  CHECK(WEXITSTATUS(status) == 0);
  CHECK(previous == kTotalTxns - 1);
}

// Child body: commits `records` records of 600 KiB with the given map size.
int sized_writer(const std::string& dir, std::uint64_t map_size_bytes, int records) {
  auto store = Store::open(dir, read_write_options(map_size_bytes));
  if (!store) return child_failed("open", store.message());
  auto txn = store.value()->begin_write();
  if (!txn) return child_failed("begin_write", txn.message());
  for (int i = 0; i < records; ++i) {
    auto put = txn->put_record(kReport, "w-" + std::to_string(i), filler(600 * 1024, 1));
    if (!put) return child_failed("put", put.message());
  }
  return txn->commit().ok() ? 0 : child_failed("commit", "failed");
}

TEST_CASE("a reader whose map the writer outgrew gets busy, and a reopen reads on") {
  TempDir dir;
  auto run = [&](std::uint64_t map_size_bytes, int records) {
    Child child([&](int, int) { return sized_writer(dir.path(), map_size_bytes, records); });
    int status = child.wait();
    REQUIRE(WIFEXITED(status));
    REQUIRE(WEXITSTATUS(status) == 0);
  };
  run(1 << 20, 1);
  auto reader = open_ok(dir.path(), read_only_options());
  REQUIRE(reader->begin_read().ok());
  run(8 << 20, 6);  // restarted with a larger map, and used it
  auto outgrown = reader->begin_read();
  REQUIRE_FALSE(outgrown.ok());
  CHECK(outgrown.code() == StoreError::busy);
  CHECK(outgrown.message().find("reopen") != std::string::npos);
  reader.reset();
  reader = open_ok(dir.path(), read_only_options());
  auto txn = reader->begin_read();
  REQUIRE(txn.ok());
  CHECK(txn->get_record(kReport, "w-5").value() == filler(600 * 1024, 1));
}

}  // namespace
}  // namespace mesh::test

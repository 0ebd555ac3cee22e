// One Store shared by threads (writers serialise, readers run alongside), and
// the always-on checks that turn misuse into an abort instead of a deadlock
// or a dangling handle (each run in a forked child).
#include <fcntl.h>

#include <atomic>
#include <string>
#include <thread>
#include <vector>

#include "tests/storage/child_process.h"
#include "tests/storage/test_util.h"

namespace mesh::test {
namespace {

// Read-modify-write of state "counter" in one WriteTxn; false on any error.
bool increment(Store& store) {
  auto txn = store.begin_write();
  if (!txn) return false;
  auto current = txn->get_state("counter");
  if (!current) return false;
  std::uint64_t value = 0;
  if (current.value()) {
    for (std::uint8_t b : *current.value()) value = value << 8 | b;
  }
  return txn->put_state("counter", u64_bytes(value + 1)).ok() && txn->commit().ok();
}

TEST_CASE("threads sharing a Store: writers serialise, readers read alongside") {
  TempDir dir;
  auto store = open_ok(dir.path());
  REQUIRE(increment(*store));  // counter = 1
  constexpr int kWriters = 3;
  constexpr int kIncrementsEach = 100;
  std::atomic<int> failures{0};
  std::atomic<bool> writers_done{false};
  std::vector<std::thread> writers;
  for (int w = 0; w < kWriters; ++w) {
    writers.emplace_back([&] {
      for (int i = 0; i < kIncrementsEach; ++i) {
        if (!increment(*store)) ++failures;
      }
    });
  }
  // A reader on its own thread: every snapshot holds a counter no smaller
  // than the one before.
  std::thread reader([&] {
    std::uint64_t previous = 0;
    for (bool last = false; !last;) {
      last = writers_done.load();
      auto txn = store->begin_read();
      if (!txn) { ++failures; return; }
      auto value = txn->get_state("counter");
      if (!value || !value.value() || value.value()->size() != 8) { ++failures; return; }
      std::uint64_t counter = 0;
      for (std::uint8_t b : *value.value()) counter = counter << 8 | b;
      if (counter < previous) ++failures;
      previous = counter;
    }
  });
  for (std::thread& t : writers) t.join();
  writers_done.store(true);
  reader.join();
  CHECK(failures.load() == 0);
  auto txn = store->begin_read();
  REQUIRE(txn.ok());
  CHECK(u64_of(*txn->find_state("counter").value()) == 1 + kWriters * kIncrementsEach);
}

TEST_CASE("a ReadTxn may move to another thread") {
  TempDir dir;
  auto store = open_ok(dir.path());
  REQUIRE(increment(*store));
  auto txn = store->begin_read();
  REQUIRE(txn.ok());
  ReadTxn moved = std::move(txn).value();
  std::optional<Bytes> seen;
  std::thread([&] {
    ReadTxn here = std::move(moved);
    seen = here.get_state("counter").value();
  }).join();
  CHECK(seen == u64_bytes(1));
}

// Runs `misuse` in a child with stderr silenced; true when it aborted.
bool aborts(const std::string& dir, void (*misuse)(std::unique_ptr<Store>&)) {
  Child child([&](int, int) {
    int null_fd = ::open("/dev/null", O_WRONLY);
    ::dup2(null_fd, 2);
    auto store = Store::open(dir, read_write_options());
    if (!store) return 3;
    misuse(store.value());
    return 0;  // the check did not fire
  });
  int status = child.wait();
  return WIFSIGNALED(status) && WTERMSIG(status) == SIGABRT;
}

TEST_CASE("misuse is caught by always-on checks") {
  TempDir dir;
  { open_ok(dir.path()); }
  CHECK(aborts(dir.path(), [](std::unique_ptr<Store>& store) {
    auto first = store->begin_write();
    auto second = store->begin_write();  // would deadlock in LMDB
  }));
  CHECK(aborts(dir.path(), [](std::unique_ptr<Store>& store) {
    auto txn = store->begin_write();
    (void)txn->commit();
    (void)txn->put_state("k", ByteView());  // after a successful commit
  }));
  CHECK(aborts(dir.path(), [](std::unique_ptr<Store>& store) {
    auto txn = store->begin_read();
    auto later = std::move(txn).value();
    (void)txn->get_state("k");  // the moved-from handle
  }));
  CHECK(aborts(dir.path(), [](std::unique_ptr<Store>& store) {
    auto alive = store->begin_read();
    store.reset();  // while `alive` still holds a transaction
  }));
  // Control: correct use does not abort.
  CHECK_FALSE(aborts(dir.path(), [](std::unique_ptr<Store>& store) {
    { auto txn = store->begin_write(); }
    auto txn = store->begin_write();
    (void)txn->commit();
  }));
}

}  // namespace
}  // namespace mesh::test

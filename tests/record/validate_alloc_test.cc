// validate_report_payload allocates nothing on the heap when it accepts.
// This program replaces the global operator new (every form) with a counting
// one; the counter is read around single calls. The first test case shows the
// counter does see allocations made inside the record library (decode builds
// a results vector), so the zero of the others can fail.
#include <doctest/doctest.h>

#include <cstdlib>
#include <new>
#include <random>
#include <vector>

#include "record/report.h"
#include "record/roster.h"
#include "tests/record/fixtures.h"
#include "tests/record/mutations.h"
#include "tests/record/random_report.h"

namespace {
std::size_t g_allocations = 0;  // single-threaded test program

void* counted(std::size_t bytes, std::size_t alignment) {
  ++g_allocations;
  if (bytes == 0) bytes = 1;
  void* p = alignment <= alignof(std::max_align_t)
                ? std::malloc(bytes)
                : std::aligned_alloc(alignment, (bytes + alignment - 1) / alignment * alignment);
  return p;
}
void* counted_or_throw(std::size_t bytes, std::size_t alignment) {
  void* p = counted(bytes, alignment);
  if (p == nullptr) throw std::bad_alloc();
  return p;
}
constexpr std::size_t kDefault = alignof(std::max_align_t);
}  // namespace

void* operator new(std::size_t n) { return counted_or_throw(n, kDefault); }
void* operator new[](std::size_t n) { return counted_or_throw(n, kDefault); }
void* operator new(std::size_t n, std::align_val_t a) {
  return counted_or_throw(n, static_cast<std::size_t>(a));
}
void* operator new[](std::size_t n, std::align_val_t a) {
  return counted_or_throw(n, static_cast<std::size_t>(a));
}
void* operator new(std::size_t n, const std::nothrow_t&) noexcept { return counted(n, kDefault); }
void* operator new[](std::size_t n, const std::nothrow_t&) noexcept { return counted(n, kDefault); }
void* operator new(std::size_t n, std::align_val_t a, const std::nothrow_t&) noexcept {
  return counted(n, static_cast<std::size_t>(a));
}
void* operator new[](std::size_t n, std::align_val_t a, const std::nothrow_t&) noexcept {
  return counted(n, static_cast<std::size_t>(a));
}
void operator delete(void* p) noexcept { std::free(p); }
void operator delete[](void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }
void operator delete[](void* p, std::size_t) noexcept { std::free(p); }
void operator delete(void* p, std::align_val_t) noexcept { std::free(p); }
void operator delete[](void* p, std::align_val_t) noexcept { std::free(p); }
void operator delete(void* p, std::size_t, std::align_val_t) noexcept { std::free(p); }
void operator delete[](void* p, std::size_t, std::align_val_t) noexcept { std::free(p); }
void operator delete(void* p, const std::nothrow_t&) noexcept { std::free(p); }
void operator delete[](void* p, const std::nothrow_t&) noexcept { std::free(p); }
void operator delete(void* p, std::align_val_t, const std::nothrow_t&) noexcept { std::free(p); }
void operator delete[](void* p, std::align_val_t, const std::nothrow_t&) noexcept { std::free(p); }

using namespace mesh;

namespace {

constexpr UnixMs kNow = 1'700'000'000'000;

struct Counted {
  bool ok;
  std::size_t allocations;
};

Counted count_validate(ByteView payload, const Roster& roster, std::uint32_t origin, UnixMs ts) {
  std::size_t before = g_allocations;
  bool ok = validate_report_payload(payload, roster, origin, ts).ok();
  return {ok, g_allocations - before};
}

Counted count_decode(ByteView payload, const Roster& roster, std::uint32_t origin, UnixMs ts) {
  std::size_t before = g_allocations;
  bool ok = decode_report_payload(payload, roster, origin, ts).ok();
  return {ok, g_allocations - before};
}

// A report whose decode must allocate: a reason beyond any small-string
// buffer and many targets, ok and failing.
Report large_report(std::uint32_t servers) {
  Report report = test::sample_report(servers, 7, kNow);
  report.self_check.reason = std::string(120, 'r');
  return report;
}

}  // namespace

TEST_CASE("the counter sees allocations inside the record library") {
  Roster roster = test::sample_roster(100, 7);
  Bytes payload = encode_report_payload(large_report(100), kNow);
  Counted decoded = count_decode(payload, roster, 0, kNow);
  REQUIRE(decoded.ok);
  CHECK(decoded.allocations >= 2);  // the reason and the results
  // A refusal builds its message, and the counter sees that too.
  Bytes broken = payload;
  broken.push_back(0xc0);
  Counted refused = count_validate(broken, roster, 0, kNow);
  CHECK_FALSE(refused.ok);
  CHECK(refused.allocations >= 1);
}

TEST_CASE("validate allocates nothing when it accepts") {
  for (std::uint32_t servers : {3u, 100u, 1000u}) {
    CAPTURE(servers);
    Roster roster = test::sample_roster(servers, 7);
    Bytes payload = encode_report_payload(large_report(servers), kNow);
    Counted validated = count_validate(payload, roster, 0, kNow);
    REQUIRE(validated.ok);
    CHECK(validated.allocations == 0);
    // A view on another roster version takes the other rule set.
    Counted other = count_validate(payload, test::sample_roster(servers, 8), 0, kNow);
    REQUIRE(other.ok);
    CHECK(other.allocations == 0);
  }
}

TEST_CASE("validate allocates nothing on any accepted seeded random report") {
  std::vector<Roster> rosters;
  for (std::size_t servers : {3, 12, 100, 1000}) rosters.push_back(test::sample_roster(servers, 7));
  std::mt19937 rng(9001);
  int accepted = 0;
  for (int i = 0; i < 3000; ++i) {
    const Roster& roster = rosters[static_cast<std::size_t>(i) % rosters.size()];
    test::RandomReport report = test::random_report_payload(roster, rng);
    Counted validated =
        count_validate(report.payload, roster, report.origin_index, report.record_timestamp_ms);
    if (!validated.ok) continue;
    ++accepted;
    CAPTURE(i);
    CHECK(validated.allocations == 0);
  }
  CHECK(accepted >= 500);
  MESSAGE("accepted random reports: " << accepted << " of 3000");
}

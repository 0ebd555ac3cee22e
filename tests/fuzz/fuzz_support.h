// Helpers shared by the fuzz targets (tests/fuzz/README.md): the property
// check that turns a broken property into a crash libFuzzer keeps, the
// allocation watch behind the "nothing allocates more than its bound"
// property, and the small fleet the record and gossip targets decode against.
//
// Each target is one `<name>_fuzz.cc` defining LLVMFuzzerTestOneInput. The
// same file is compiled twice: into a libFuzzer program (preset fuzz, clang)
// and, renamed by a macro, into fuzz_replay, the ctest program that runs every
// committed corpus and regression input in the normal g++ builds.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

#include "common/bytes.h"
#include "record/keys.h"
#include "record/roster.h"

#if defined(__has_feature)
#if __has_feature(address_sanitizer)
#define MESHNODE_FUZZ_HOOKS 1
#endif
#endif
#if defined(__SANITIZE_ADDRESS__)
#define MESHNODE_FUZZ_HOOKS 1
#endif
// g++ 12 ships no <sanitizer/allocator_interface.h>: its ASan build runs
// without the hook (the watch then sees nothing).
#if defined(MESHNODE_FUZZ_HOOKS) && !__has_include(<sanitizer/allocator_interface.h>)
#undef MESHNODE_FUZZ_HOOKS
#endif
#ifdef MESHNODE_FUZZ_HOOKS
#include <sanitizer/allocator_interface.h>
#endif

// A property that does not hold: print it and abort (libFuzzer saves the
// input as crash-*, fuzz_replay fails with the file's name printed).
#define FUZZ_CHECK(condition)                                                          \
  do {                                                                                 \
    if (!(condition)) ::mesh::fuzz::property_broken(#condition, __FILE__, __LINE__);  \
  } while (0)

namespace mesh::fuzz {

[[noreturn]] inline void property_broken(const char* what, const char* file, int line) {
  std::fprintf(stderr, "fuzz property broken: %s (%s:%d)\n", what, file, line);
  std::fflush(stderr);
  std::abort();
}

inline ByteView view_of(const std::uint8_t* data, std::size_t size) { return {data, size}; }
inline std::string_view text_of(const std::uint8_t* data, std::size_t size) {
  return {reinterpret_cast<const char*>(data), size};
}

// The largest single heap allocation (malloc or operator new) made while a
// watch is open. Under clang's ASan (the fuzz build) it hooks the
// allocator; elsewhere (plain builds, g++'s ASan build) it sees nothing and
// largest() stays 0, so the check it feeds holds trivially there.
class AllocationWatch {
 public:
  AllocationWatch() {
    install();
    largest_ref() = 0;
    active_ref() = true;
  }
  ~AllocationWatch() { active_ref() = false; }
  AllocationWatch(const AllocationWatch&) = delete;
  AllocationWatch& operator=(const AllocationWatch&) = delete;

  std::size_t largest() const { return largest_ref(); }

 private:
  static std::size_t& largest_ref() {
    static std::size_t largest = 0;
    return largest;
  }
  static bool& active_ref() {
    static bool active = false;
    return active;
  }
#ifdef MESHNODE_FUZZ_HOOKS
  static void on_malloc(const volatile void*, std::size_t size) {
    if (active_ref() && size > largest_ref()) largest_ref() = size;
  }
  static void on_free(const volatile void*) {}
  static void install() {
    static const bool installed = __sanitizer_install_malloc_and_free_hooks(on_malloc, on_free) != 0;
    (void)installed;
  }
#else
  static void install() {}
#endif
};

// The fleet of tests/vectors/records.json (tests/vectors/make_vectors.cc):
// three servers keyed by 32-byte seeds of one repeated byte, and the
// operator. The vectors' roster_ok and report_ok are valid records of it.
inline constexpr std::uint8_t kOperatorSeed = 0x4f;
inline constexpr std::uint8_t kServerSeeds[] = {0x41, 0x42, 0x43};  // de-fra-1, nl-ams-1, fi-hel-1
inline constexpr UnixMs kVectorTimestampMs = 1'700'000'000'000;

inline KeyPair key_of(std::uint8_t seed_byte) {
  Bytes seed(32, seed_byte);
  return key_pair_from_seed(seed);
}

// The vectors' roster (version 1), built in code.
inline Roster vector_roster() {
  struct Row {
    const char* id;
    const char* country;
    const char* host;
    const char* sni;
  };
  const Row rows[] = {{"de-fra-1", "DE", "203.0.113.11", "www.example.com"},
                      {"nl-ams-1", "NL", "198.51.100.21", "cdn.example.net"},
                      {"fi-hel-1", "FI", "192.0.2.32", "www.example.org"}};
  Roster roster;
  roster.version = 1;
  roster.routes = {Route{"eu", "Europe"}};
  for (std::size_t i = 0; i < 3; ++i) {
    ServerEntry server;
    server.id = rows[i].id;
    server.country = rows[i].country;
    server.probe = Endpoint{rows[i].host, 443};
    server.sni = rows[i].sni;
    server.gossip = Endpoint{rows[i].host, 7946};
    server.key = key_of(kServerSeeds[i]).public_key;
    server.routes = {"eu"};
    roster.servers.push_back(server);
  }
  return roster;
}

}  // namespace mesh::fuzz

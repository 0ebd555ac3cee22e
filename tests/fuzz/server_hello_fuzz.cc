// Fuzz target: the server's answer to a probe's ClientHello
// (node/tls_hello.h, docs/PROTOCOL.md "The TLS stage"), what any server or
// censor on a probed path can send. Input: one byte choosing how the
// answer is cut into reads, then the bytes the server sent.
//
// Properties:
// - the answer does not depend on how the bytes are cut into reads, and
//   once decided, later bytes do not change it;
// - a ServerHello answer names TLS 1.2 or 1.3 and an offered suite of
//   that version (1.3 suites only with 1.3);
// - no allocation larger than the largest ServerHello and its header.
#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <span>

#include "node/tls_hello.h"
#include "node/tls_hello_codes.h"
#include "tests/fuzz/fuzz_support.h"

namespace {

using namespace mesh::node;

constexpr std::array<std::uint8_t, 32> kSessionId = {
    0x40, 0x41, 0x42, 0x43, 0x44, 0x45, 0x46, 0x47, 0x48, 0x49, 0x4a, 0x4b, 0x4c, 0x4d, 0x4e, 0x4f,
    0x50, 0x51, 0x52, 0x53, 0x54, 0x55, 0x56, 0x57, 0x58, 0x59, 0x5a, 0x5b, 0x5c, 0x5d, 0x5e, 0x5f};

ServerAnswer read_in_chunks(std::span<const std::uint8_t> bytes, std::uint8_t cut) {
  ServerHelloReader reader(kSessionId);
  std::size_t step = 1 + cut % 7;
  ServerAnswer decided = ServerAnswer::incomplete;
  while (!bytes.empty()) {
    const std::size_t n = std::min(step, bytes.size());
    const ServerAnswer answer = reader.feed(bytes.first(n));
    if (decided != ServerAnswer::incomplete) FUZZ_CHECK(answer == decided);
    decided = answer;
    bytes = bytes.subspan(n);
    step = 1 + (step * 5 + cut) % 13;
  }
  return decided;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  const std::uint8_t cut = data[0];
  const std::span<const std::uint8_t> bytes(data + 1, size - 1);
  mesh::fuzz::AllocationWatch watch;
  ServerHelloReader whole(kSessionId);
  const ServerAnswer answer = whole.feed(bytes);
  FUZZ_CHECK(watch.largest() <= 4 + kServerHelloBytesMax);
  FUZZ_CHECK(read_in_chunks(bytes, cut) == answer);
  if (answer == ServerAnswer::server_hello) {
    const std::uint16_t suite = whole.cipher_suite();
    const bool tls13_suite = (suite >> 8) == 0x13;
    FUZZ_CHECK(whole.version() == tls::kVersionTls12 || whole.version() == tls::kVersionTls13);
    FUZZ_CHECK(std::find(tls::kOfferedSuites.begin(), tls::kOfferedSuites.end(), suite) !=
               tls::kOfferedSuites.end());
    FUZZ_CHECK(tls13_suite == (whole.version() == tls::kVersionTls13));
  }
  return 0;
}

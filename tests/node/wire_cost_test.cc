// The wire estimate's arithmetic (node/agent/wire_cost.h), pinned.
#include "node/agent/wire_cost.h"

#include <doctest/doctest.h>

namespace mesh::agent {
namespace {

static_assert(kPacketOverheadBytes == 66);
static_assert(frame_wire_bytes(1400) == 1536);  // usable in constant expressions

TEST_CASE("packet sizes: Ethernet + IPv4 + TCP with timestamps; SYNs carry their options") {
  CHECK(kPacketOverheadBytes == 14 + 20 + 32);
  CHECK(kSynBytes == 74);
  CHECK(kMssBytes == 1500 - 20 - 32);
}

TEST_CASE("SYNs sent follow Linux's retransmit schedule: 0, 1, 3, 7, 15, 31, 63 s") {
  CHECK(syn_count_after(0) == 1);
  CHECK(syn_count_after(999) == 1);
  CHECK(syn_count_after(1'000) == 2);
  CHECK(syn_count_after(2'999) == 2);
  CHECK(syn_count_after(3'000) == 3);
  CHECK(syn_count_after(7'000) == 4);
  CHECK(syn_count_after(10'000) == 4);
  CHECK(syn_count_after(63'000) == 7);
  CHECK(syn_count_after(1'000'000) == 7);  // tcp_syn_retries = 6
  CHECK(syn_count_after(-5) == 1);
}

TEST_CASE("probe costs") {
  CHECK(probe_handshake_wire_bytes() == 74 + 74);
  CHECK(kAckBytes == 66);  // the handshake's ACK a probe never sends alone
  CHECK(tcp_connect_probe_wire_bytes() == 74 + 74 + 66);
  CHECK(tcp_refused_wire_bytes() == 74 + 60);
  CHECK(tcp_unanswered_wire_bytes(300) == 74);
  CHECK(tcp_unanswered_wire_bytes(10'000) == 4 * 74);
  // 148 + (500 + 66 + 66) + (2000 + 2 × 66 + 66) + 66
  CHECK(tls_probe_wire_bytes(500, 2'000) == 3'044);
  // A HelloRetryRequest and a change_cipher_spec in one segment, not ACKed:
  // 148 + (241 + 66 + 66) + (99 + 66) + 66
  CHECK(tls_probe_wire_bytes(241, 99) == 752);
  CHECK(tls_probe_wire_bytes(kTypicalClientHelloBytes, kTypicalHelloRetryBytes) == 752);
  CHECK(tls_probe_wire_bytes(500, 2'000) > tcp_connect_probe_wire_bytes());
}

TEST_CASE("a stream direction: payload, 66 B per 1448-byte segment, an ACK per two segments") {
  CHECK(segment_count(0) == 0);
  CHECK(segment_count(1) == 1);
  CHECK(segment_count(1'448) == 1);
  CHECK(segment_count(1'449) == 2);
  CHECK(segments_wire_bytes(0) == 0);
  CHECK(segments_wire_bytes(1'449) == 1'449 + 2 * 66);
  CHECK(stream_wire_bytes(0) == 0);
  CHECK(stream_wire_bytes(1) == 1 + 66 + 66);
  CHECK(stream_wire_bytes(1'448) == 1'448 + 66 + 66);
  CHECK(stream_wire_bytes(1'449) == 1'449 + 2 * 66 + 66);
  CHECK(stream_wire_bytes(3 * 1'448) == 3 * 1'448 + 3 * 66 + 2 * 66);
}

TEST_CASE("gossip frames add a 4-byte length prefix") {
  CHECK(frame_wire_bytes(0) == 4 + 66 + 66);
  CHECK(frame_wire_bytes(1'444) == 1'448 + 66 + 66);
  CHECK(frame_wire_bytes(1'445) == 1'449 + 2 * 66 + 66);
  CHECK(frame_wire_bytes(1'400) == 1'536);
}

}  // namespace
}  // namespace mesh::agent

// Estimated bytes on the wire for probes and gossip frames, both directions,
// counted at the Ethernet + IPv4 + TCP level (no preamble, FCS or
// inter-frame gap). The prober (node/prober.cc) fills ProbeOutcome::wire_bytes
// with these; the agent charges gossip frames with frame_wire_bytes() against
// the daily volume cap. Pure arithmetic: no IO, no clock.
//
// Assumptions, each a named constant below: Linux defaults (TCP timestamps
// on, so every segment after the SYN carries a 12-byte option block; SYN
// options MSS + SACK-permitted + timestamps + window scale), a 1500-byte MTU,
// IPv4 (IPv6 adds 20 bytes per packet: the estimate is low by that much),
// delayed ACKs (one pure ACK per two data segments received). A probe's
// socket delays its ACKs from the start (TCP_QUICKACK off before the
// connect, node/probe_session.cc): the handshake's last ACK rides on the
// ClientHello, or is replaced by the RST of a bare connect, and an answer
// read at once is never ACKed before the RST.
#pragma once

#include <cstddef>
#include <cstdint>

namespace mesh::agent {

inline constexpr std::uint64_t kEthernetHeaderBytes = 14;
inline constexpr std::uint64_t kIpv4HeaderBytes = 20;
// TCP header 20 + timestamp option block 12 (NOP, NOP, TS 10).
inline constexpr std::uint64_t kTcpHeaderWithTimestampsBytes = 32;
// Every segment but the SYNs: 14 + 20 + 32 = 66.
inline constexpr std::uint64_t kPacketOverheadBytes =
    kEthernetHeaderBytes + kIpv4HeaderBytes + kTcpHeaderWithTimestampsBytes;
// SYN and SYN-ACK: 14 + 20 + TCP 20 + options 20 (MSS 4, SACK-permitted 2,
// timestamps 10, NOP 1, window scale 3) = 74.
inline constexpr std::uint64_t kSynBytes = 74;
// A pure ACK or our RST: headers only.
inline constexpr std::uint64_t kAckBytes = kPacketOverheadBytes;
inline constexpr std::uint64_t kRstBytes = kPacketOverheadBytes;
// The RST that refuses a SYN carries no options: 14 + 20 + 20 = 54, padded
// to the Ethernet minimum frame of 60.
inline constexpr std::uint64_t kRefusalRstBytes = 60;
// Payload per segment: MTU 1500 − IPv4 20 − TCP with timestamps 32.
inline constexpr std::uint64_t kMssBytes = 1448;
// Gossip frames on a persistent stream carry a 4-byte length prefix.
inline constexpr std::uint64_t kFrameLengthPrefixBytes = 4;
// Linux sends a SYN at 0 s and retransmits it at 1, 3, 7, 15, 31, 63 s
// (initial RTO 1 s, doubled each time, net.ipv4.tcp_syn_retries = 6).
inline constexpr std::uint64_t kSynRetransmitsMax = 6;
inline constexpr std::int64_t kSynInitialRtoMs = 1'000;

// SYNs sent by `elapsed_ms` after the first: 1 + the retransmits whose time
// (2^k − 1) × 1 s, k = 1..6, has come. 0 ms → 1, 999 → 1, 1000 → 2,
// 3000 → 3, 10'000 → 4.
constexpr std::uint64_t syn_count_after(std::int64_t elapsed_ms) {
  std::uint64_t count = 1;
  std::int64_t retransmit_at_ms = kSynInitialRtoMs;  // (2^1 − 1) s
  for (std::uint64_t k = 1; k <= kSynRetransmitsMax && retransmit_at_ms <= elapsed_ms; ++k) {
    ++count;
    retransmit_at_ms = retransmit_at_ms * 2 + kSynInitialRtoMs;  // 1, 3, 7, 15 ... s
  }
  return count;
}

// Segments needed for `payload_bytes`: ceil(payload / 1448); 0 for 0.
constexpr std::uint64_t segment_count(std::uint64_t payload_bytes) {
  return (payload_bytes + kMssBytes - 1) / kMssBytes;
}

// The payload and 66 B of headers per segment, ACKs aside.
constexpr std::uint64_t segments_wire_bytes(std::uint64_t payload_bytes) {
  return payload_bytes + segment_count(payload_bytes) * kPacketOverheadBytes;
}

// One direction of a stream: its segments and the receiver's pure ACKs,
// one per two segments (rounded up: a lone segment is ACKed when the
// delayed-ACK timer fires).
constexpr std::uint64_t stream_wire_bytes(std::uint64_t payload_bytes) {
  return segments_wire_bytes(payload_bytes) + (segment_count(payload_bytes) + 1) / 2 * kAckBytes;
}

// A probe's handshake: SYN 74 + SYN-ACK 74 = 148; its ACK (66) is
// delayed, and rides on the ClientHello or is never sent (a bare
// connect's RST).
constexpr std::uint64_t probe_handshake_wire_bytes() { return kSynBytes + kSynBytes; }

// A bare TCP probe that connected: SYN, SYN-ACK and our RST, 74 + 74 + 66
// = 214 (the prober closes with SO_LINGER {on, 0} before its delayed ACK:
// no ACK, no FIN exchange, no TIME_WAIT; 280 with the ACK, until
// 2026-12-06).
constexpr std::uint64_t tcp_connect_probe_wire_bytes() {
  return probe_handshake_wire_bytes() + kRstBytes;
}

// A refused connect: SYN 74 + the refusing RST 60 = 134.
constexpr std::uint64_t tcp_refused_wire_bytes() { return kSynBytes + kRefusalRstBytes; }

// A connect that got no answer for `elapsed_ms`: 74 B per SYN sent
// (syn_count_after). A 10 s timeout: 4 SYNs, 296 B.
constexpr std::uint64_t tcp_unanswered_wire_bytes(std::int64_t elapsed_ms) {
  return syn_count_after(elapsed_ms) * kSynBytes;
}

// A TLS probe: the handshake 148, the bytes it wrote (`sent`) as a stream
// (stream_wire_bytes: the server ACKs them), the bytes it read
// (`received`) with our delayed ACKs, one per two segments but the last
// (the RST follows it at once), and our RST 66.
constexpr std::uint64_t tls_probe_wire_bytes(std::uint64_t sent_bytes,
                                             std::uint64_t received_bytes) {
  return probe_handshake_wire_bytes() + stream_wire_bytes(sent_bytes) + segments_wire_bytes(received_bytes) +
         segment_count(received_bytes) / 2 * kAckBytes + kRstBytes;
}

// The probe's ClientHello with a 15-byte SNI (node/tls_client_hello.cc),
// and a TLS 1.3 server's answer to it, a HelloRetryRequest echoing its
// 32-byte session id with a change_cipher_spec: what meshsim models a TLS
// probe with (752 B, as the prober counts one against OpenSSL).
inline constexpr std::uint64_t kTypicalClientHelloBytes = 241;
inline constexpr std::uint64_t kTypicalHelloRetryBytes = 99;

// One gossip frame of `frame_bytes` on an established stream: payload n + 4
// (length prefix), 66 B per 1448-byte segment, an ACK per two segments.
// A 1400-byte frame: 1404 + 66 + 66 = 1536.
constexpr std::uint64_t frame_wire_bytes(std::size_t frame_bytes) {
  return stream_wire_bytes(static_cast<std::uint64_t>(frame_bytes) + kFrameLengthPrefixBytes);
}

}  // namespace mesh::agent

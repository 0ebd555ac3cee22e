// The plaintext inside a sealed frame (docs/PROTOCOL.md, Gossip, "Messages"):
//   [roster_version, [message, ...]]   with each message [type, ...].
// Origins in entries are roster indices in the SENDER's roster of
// `roster_version`; a receiver on another version uses only roster entries.
// Decoding is strict and bounded: any structural fault refuses the whole
// frame; a message of an unknown type (a newer peer's) is skipped and counted.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <optional>
#include <vector>

#include "common/bytes.h"
#include "common/result.h"
#include "record/envelope.h"

namespace mesh::gossip {

// Wire values are append-only: never renumber or reuse one.
enum class MessageType : std::uint8_t {
  push = 1,        // [1, bin record]: eager push along the tree; a duplicate PRUNEs the sender
  ihave = 2,       // [2, [kind, origin, seq, ...]]: records the sender holds (lazy announcement)
  graft = 3,       // [3, [kind, origin, seq, ...]]: send me these, and make me eager
  prune = 4,       // [4, [kind, origin, seq, ...]]: drop me from these origins' trees
  sync = 5,        // [5, [kind, origin, seq, hash32, ...]]: everything the sender holds
  sync_reply = 6,  // [6, [kind, origin, seq, hash32, ...]]: what the replier lacks or holds older
  repair = 7,      // [7, bin record]: a body in answer to GRAFT/SYNC; a duplicate never PRUNEs
  summary = 8,     // [8, cutoff_ms, bin 16]: the sender's record set up to cutoff_ms, hashed
};

// One record named compactly. `hash32` (the record's fingerprint: the first 4
// bytes of its signature, big-endian) travels in SYNC and SYNC_REPLY only, so
// that two different records with the same seq (an equivocating origin) get
// repaired too.
struct Entry {
  RecordKind kind = RecordKind::report;
  std::uint32_t origin = 0;  // roster index; 0 for the roster
  std::uint64_t seq = 0;
  std::uint32_t hash32 = 0;
  bool operator==(const Entry&) const = default;
};

// SUMMARY: opens a SYNC round. `digest` is RecordStore::summary(cutoff_ms)
// of the sender; a receiver whose own summary at that cutoff differs answers
// with a SYNC (docs/PROTOCOL.md, Gossip, "Repair: SYNC").
inline constexpr std::size_t kSummaryBytes = 16;
struct Summary {
  std::uint64_t cutoff_ms = 0;
  std::array<std::uint8_t, kSummaryBytes> digest{};
  bool operator==(const Summary&) const = default;
};

// A record body. `raw` views bytes owned elsewhere: the frame plaintext a
// body was decoded from (valid while it is), or `keep` for a body queued to
// send (the held record's shared bytes: no copy per peer).
struct Body {
  bool repair = false;  // true: REPAIR, false: PUSH
  ByteView raw;
  std::shared_ptr<const Bytes> keep;

  // A body that owns its bytes.
  static Body owned(bool repair, std::shared_ptr<const Bytes> bytes);
  static Body owned(bool repair, Bytes bytes);
};

// A frame's messages grouped by type (several messages of one type merge).
struct FrameContent {
  std::uint64_t roster_version = 0;
  std::vector<Body> bodies;
  std::vector<Entry> ihave;
  std::vector<Entry> graft;
  std::vector<Entry> prune;
  std::optional<Summary> summary;  // at most one per frame
  std::optional<std::vector<Entry>> sync;
  std::optional<std::vector<Entry>> sync_reply;
  std::size_t unknown_messages = 0;  // decode only: skipped messages of unknown type

  bool empty() const;
};

enum class WireError {
  malformed,  // not the documented layout, wrong types, trailing bytes
  oversize,   // a list or body over its limit
};

// Encodes in a fixed order: PRUNE, GRAFT, SUMMARY, SYNC, SYNC_REPLY, IHAVE, bodies,
// every integer in its shortest msgpack form. The second form appends to
// `out` (the shell seals the frame in place around it).
// REQUIRES: every list within kEntriesPerListMax, bodies within kRecordBytesMax.
Bytes encode_frame_content(const FrameContent& content);
void encode_frame_content(const FrameContent& content, Bytes& out);
// Strict and bounded; the bodies view into `plaintext`, which must outlive
// the result.
Result<FrameContent, WireError> decode_frame_content(ByteView plaintext);

// Upper bounds of encoded sizes, for filling a frame up to a budget.
inline constexpr std::size_t kEntryBytesMax = 1 + 5 + 9;       // kind, origin, seq
inline constexpr std::size_t kSyncEntryBytesMax = kEntryBytesMax + 5;
inline constexpr std::size_t kSummaryMessageBytes = 1 + 1 + 9 + 2 + kSummaryBytes;
std::size_t body_bytes_max(std::size_t raw_size);

}  // namespace mesh::gossip

// Link security (docs/PROTOCOL.md, Gossip, "Frames"): every frame between two roster
// members is sealed with XChaCha20-Poly1305-IETF under per-pair, per-direction
// session keys. X25519 keys are derived from the roster's Ed25519 keys and
// crypto_kx gives the session keys (the member with the smaller Ed25519 public
// key is the kx "client"). Nonce = boot counter (8 B BE) || frame counter
// (8 B BE) || 8 zero bytes: the boot counter rises at every start and the
// frame counter at every frame, so a nonce never repeats under one key.
//
// Frame = magic (1) || sender key id (4) || boot (varint) || counter (varint)
//         || ciphertext || tag (16). The header (7 to 25 bytes) is the AEAD's
// additional data; varints are unsigned LEB128, minimal (docs/PROTOCOL.md §2).
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <span>
#include <unordered_map>
#include <vector>

#include "common/bytes.h"
#include "common/result.h"
#include "record/keys.h"

namespace mesh::gossip {

inline constexpr std::uint8_t kFrameMagic = 0xA2;  // frame format 2; a new format takes a new value
inline constexpr std::size_t kKeyIdBytes = 4;
inline constexpr std::size_t kVarintBytesMax = 10;  // a 64-bit value in LEB128
// A header is 7 bytes (boot and counter below 128) to 25. Callers that seal
// in place leave kFrameHeaderBytesMax of room before the plaintext.
inline constexpr std::size_t kFrameHeaderBytesMin = 1 + kKeyIdBytes + 1 + 1;
inline constexpr std::size_t kFrameHeaderBytesMax = 1 + kKeyIdBytes + 2 * kVarintBytesMax;
inline constexpr std::size_t kFrameTagBytes = 16;
inline constexpr std::size_t kReplayWindowFrames = 256;

// The first 4 bytes of an Ed25519 public key, big-endian: names the sender
// in a frame header. Roster keys are distinct; a key id shared by two members
// is resolved by trying each (the AEAD tells which).
using KeyId = std::uint32_t;
KeyId key_id_of(const PublicKey& key);

enum class LinkError {
  oversize,       // over the caller's frame limit
  malformed,      // shorter than header + tag, unknown magic, or a varint not minimal
  bad_key,        // a key that does not convert to X25519 (not a valid point)
  undecryptable,  // AEAD check failed: tampered, or sealed for another pair
  replayed,       // nonce seen before, or older than the replay window
};
const char* to_string(LinkError error);

struct FrameHeader {
  KeyId sender = 0;
  std::uint64_t boot = 0;
  std::uint64_t counter = 0;
  std::size_t bytes = 0;  // the header's length: the ciphertext starts here
};

// Structural parse of the header only, strict: a varint longer than it
// needs to be, or over 64 bits, is malformed, so a header has one encoding.
// The frame must also hold a tag after it. REQUIRES nothing of `frame`.
Result<FrameHeader, LinkError> parse_frame_header(ByteView frame);

// Per-sender replay protection: the highest (boot, counter) seen and a bitmap
// of the kReplayWindowFrames counters below it, so frames reordered in
// flight still open while a repeated nonce never does.
class ReplayWindow {
 public:
  bool seen_or_too_old(std::uint64_t boot, std::uint64_t counter) const;
  // REQUIRES: !seen_or_too_old(boot, counter). Call after the frame opened.
  // True when the frame is the first of a newer boot than frames seen
  // before: the sender restarted.
  bool mark(std::uint64_t boot, std::uint64_t counter);

 private:
  static constexpr std::size_t kWords = kReplayWindowFrames / 64;
  bool any_ = false;
  std::uint64_t boot_ = 0;
  std::uint64_t highest_ = 0;
  std::array<std::uint64_t, kWords> bits_{};  // bit i: counter highest_ - i was seen
};

class LinkCrypto {
 public:
  // `self` is this node's Ed25519 key; `boot_counter` as in CoreConfig.
  LinkCrypto(const SecretKey& self, std::uint64_t boot_counter);
  ~LinkCrypto();  // wipes the derived secrets
  LinkCrypto(const LinkCrypto&) = delete;
  LinkCrypto& operator=(const LinkCrypto&) = delete;

  // Seals `plaintext` for `peer`. bad_key if the peer's key has no X25519 form.
  Result<Bytes, LinkError> seal(const PublicKey& peer, ByteView plaintext);

  // Opens a frame whose header named `peer`: replay check, then AEAD. On
  // success the nonce is marked seen. Nothing changes on failure.
  Result<Bytes, LinkError> open(const PublicKey& peer, const FrameHeader& header, ByteView frame);

  // The same two without a copy per frame. seal_in_place: `frame` holds
  // kFrameHeaderBytesMax of room followed by the plaintext; on success it is
  // the sealed frame (header written, the room it did not use dropped,
  // ciphertext in place, tag appended).
  // open_into: the plaintext goes to `plaintext` (resized, capacity reused);
  // `restarted`, when given, tells whether the frame is the peer's first
  // since it restarted (a newer boot counter than its earlier frames').
  Status<LinkError> seal_in_place(const PublicKey& peer, Bytes& frame);
  Status<LinkError> open_into(const PublicKey& peer, const FrameHeader& header, ByteView frame,
                              Bytes& plaintext, bool* restarted = nullptr);

  // Drops cached state of keys not in `members` (called on a roster change).
  // REQUIRES: `members` sorted ascending.
  void retain_only(std::span<const PublicKey> members);

  std::uint64_t frames_sealed() const { return counter_; }
  // The peers whose session keys are derived (one scalar multiplication
  // each), ascending. For tests and meshsim: it shows the set stays bounded.
  std::vector<PublicKey> linked_keys() const;

 private:
  struct PeerLink {
    std::array<std::uint8_t, 32> rx{};
    std::array<std::uint8_t, 32> tx{};
    ReplayWindow window;
  };
  PeerLink* link_for(const PublicKey& peer);  // null on bad_key
  // Every frame sealed or opened looks its peer up: one bucket and one node
  // instead of a walk down a tree of 32-byte compares. Keys are the
  // roster's (a frame's sender is found there first), so their key ids
  // (the first 4 bytes) spread them.
  struct KeyHash {
    std::size_t operator()(const PublicKey& key) const noexcept;
  };

  PublicKey self_public_{};
  std::array<std::uint8_t, 32> self_x25519_public_{};
  std::array<std::uint8_t, 32> self_x25519_secret_{};
  bool self_ok_ = false;
  std::uint64_t boot_ = 0;
  std::uint64_t counter_ = 0;
  std::unordered_map<PublicKey, PeerLink, KeyHash> links_;
};

}  // namespace mesh::gossip

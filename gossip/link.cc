#include "gossip/link.h"

#include <sodium.h>

#include <algorithm>
#include <cstring>
#include <optional>

namespace mesh::gossip {
namespace {

static_assert(crypto_aead_xchacha20poly1305_ietf_NPUBBYTES == 24);
static_assert(crypto_aead_xchacha20poly1305_ietf_ABYTES == kFrameTagBytes);
static_assert(crypto_kx_SESSIONKEYBYTES == 32);

void put_u64(std::uint8_t* out, std::uint64_t value) {
  for (int i = 7; i >= 0; --i, value >>= 8) out[i] = static_cast<std::uint8_t>(value);
}

// Unsigned LEB128: 7 bits a byte, low first, the high bit set on every byte
// but the last. Returns the bytes written (1 to kVarintBytesMax).
std::size_t put_varint(std::uint8_t* out, std::uint64_t value) {
  std::size_t n = 0;
  while (value >= 0x80) {
    out[n++] = static_cast<std::uint8_t>(value | 0x80);
    value >>= 7;
  }
  out[n++] = static_cast<std::uint8_t>(value);
  return n;
}

std::size_t varint_size(std::uint64_t value) {
  std::size_t n = 1;
  for (; value >= 0x80; value >>= 7) ++n;
  return n;
}

// Reads a minimal LEB128 varint from `in` at `at`, advancing it; nullopt
// when it runs past the end, is over 64 bits, or has a redundant last byte
// (0x00 after a continuation: the same value has a shorter encoding).
std::optional<std::uint64_t> get_varint(ByteView in, std::size_t& at) {
  std::uint64_t value = 0;
  for (std::size_t i = 0; i < kVarintBytesMax; ++i) {
    if (at >= in.size()) return std::nullopt;
    const std::uint8_t byte = in[at++];
    if (i == kVarintBytesMax - 1 && byte > 1) return std::nullopt;  // bit 64 and up
    value |= std::uint64_t{byte & 0x7fu} << (7 * i);
    if ((byte & 0x80) == 0) {
      if (i > 0 && byte == 0) return std::nullopt;
      return value;
    }
  }
  return std::nullopt;
}

std::array<std::uint8_t, 24> make_nonce(std::uint64_t boot, std::uint64_t counter) {
  std::array<std::uint8_t, 24> nonce{};
  put_u64(nonce.data(), boot);
  put_u64(nonce.data() + 8, counter);
  return nonce;
}

}  // namespace

KeyId key_id_of(const PublicKey& key) {
  KeyId id = 0;
  for (std::size_t i = 0; i < kKeyIdBytes; ++i) id = (id << 8) | key[i];
  return id;
}

const char* to_string(LinkError error) {
  switch (error) {
    case LinkError::oversize: return "oversize";
    case LinkError::malformed: return "malformed";
    case LinkError::bad_key: return "bad_key";
    case LinkError::undecryptable: return "undecryptable";
    case LinkError::replayed: return "replayed";
  }
  return "unknown";
}

Result<FrameHeader, LinkError> parse_frame_header(ByteView frame) {
  if (frame.size() < kFrameHeaderBytesMin + kFrameTagBytes) {
    return make_error(LinkError::malformed, "frame shorter than header and tag");
  }
  if (frame[0] != kFrameMagic) return make_error(LinkError::malformed, "unknown frame magic");
  FrameHeader header;
  for (std::size_t i = 0; i < kKeyIdBytes; ++i) header.sender = (header.sender << 8) | frame[1 + i];
  std::size_t at = 1 + kKeyIdBytes;
  const auto boot = get_varint(frame, at);
  if (!boot) return make_error(LinkError::malformed, "frame boot counter is not a minimal varint");
  const auto counter = get_varint(frame, at);
  if (!counter) return make_error(LinkError::malformed, "frame counter is not a minimal varint");
  if (frame.size() - at < kFrameTagBytes) {
    return make_error(LinkError::malformed, "frame shorter than header and tag");
  }
  header.boot = *boot;
  header.counter = *counter;
  header.bytes = at;
  return header;
}

bool ReplayWindow::seen_or_too_old(std::uint64_t boot, std::uint64_t counter) const {
  if (!any_ || boot > boot_) return false;
  if (boot < boot_) return true;
  if (counter > highest_) return false;
  const std::uint64_t age = highest_ - counter;
  if (age >= kReplayWindowFrames) return true;
  return (bits_[age / 64] >> (age % 64)) & 1;
}

bool ReplayWindow::mark(std::uint64_t boot, std::uint64_t counter) {
  MESH_CHECK(!seen_or_too_old(boot, counter), "ReplayWindow::mark of a seen nonce");
  if (!any_ || boot > boot_) {
    const bool restarted = any_;
    any_ = true;
    boot_ = boot;
    highest_ = counter;
    bits_ = {};
    bits_[0] = 1;
    return restarted;
  }
  if (counter > highest_) {
    // Shift the bitmap by the advance (a multi-word shift, bit 0 = newest).
    const std::uint64_t shift = counter - highest_;
    std::array<std::uint64_t, kWords> shifted{};
    if (shift < kReplayWindowFrames) {
      const std::size_t words = shift / 64, bits = shift % 64;
      for (std::size_t i = kWords; i-- > words;) {
        std::uint64_t value = bits_[i - words] << bits;
        if (bits != 0 && i > words) value |= bits_[i - words - 1] >> (64 - bits);
        shifted[i] = value;
      }
    }
    bits_ = shifted;
    highest_ = counter;
  }
  const std::uint64_t age = highest_ - counter;
  bits_[age / 64] |= std::uint64_t{1} << (age % 64);
  return false;
}

LinkCrypto::LinkCrypto(const SecretKey& self, std::uint64_t boot_counter)
    : self_public_(self.public_key()), boot_(boot_counter) {
  MESH_CHECK(sodium_init() >= 0, "sodium_init failed");
  self_ok_ = crypto_sign_ed25519_pk_to_curve25519(self_x25519_public_.data(),
                                                  self_public_.data()) == 0 &&
             crypto_sign_ed25519_sk_to_curve25519(self_x25519_secret_.data(),
                                                  self.bytes.data()) == 0;
}

LinkCrypto::~LinkCrypto() {
  sodium_memzero(self_x25519_secret_.data(), self_x25519_secret_.size());
  for (auto& [key, link] : links_) {
    sodium_memzero(link.rx.data(), link.rx.size());
    sodium_memzero(link.tx.data(), link.tx.size());
  }
}

std::size_t LinkCrypto::KeyHash::operator()(const PublicKey& key) const noexcept {
  return static_cast<std::size_t>(key_id_of(key));
}

LinkCrypto::PeerLink* LinkCrypto::link_for(const PublicKey& peer) {
  if (auto it = links_.find(peer); it != links_.end()) return &it->second;
  if (!self_ok_ || peer == self_public_) return nullptr;
  std::array<std::uint8_t, 32> peer_x25519{};
  if (crypto_sign_ed25519_pk_to_curve25519(peer_x25519.data(), peer.data()) != 0) return nullptr;
  PeerLink link;
  // The smaller Ed25519 key is the kx client, so both ends agree on roles.
  const bool client = std::lexicographical_compare(self_public_.begin(), self_public_.end(),
                                                   peer.begin(), peer.end());
  const int rc =
      client ? crypto_kx_client_session_keys(link.rx.data(), link.tx.data(),
                                             self_x25519_public_.data(),
                                             self_x25519_secret_.data(), peer_x25519.data())
             : crypto_kx_server_session_keys(link.rx.data(), link.tx.data(),
                                             self_x25519_public_.data(),
                                             self_x25519_secret_.data(), peer_x25519.data());
  if (rc != 0) return nullptr;
  return &links_.emplace(peer, link).first->second;
}

Status<LinkError> LinkCrypto::seal_in_place(const PublicKey& peer, Bytes& frame) {
  MESH_CHECK(frame.size() >= kFrameHeaderBytesMax, "seal_in_place without header room");
  PeerLink* link = link_for(peer);
  if (link == nullptr) return make_error(LinkError::bad_key, "peer key has no X25519 form");
  const std::uint64_t counter = counter_++;
  // The header goes at the end of the room, right before the plaintext, and
  // the room it did not use is dropped: one move of the plaintext, cheaper
  // than the AEAD over it.
  const std::size_t header_bytes = 1 + kKeyIdBytes + varint_size(boot_) + varint_size(counter);
  std::uint8_t* header = frame.data() + (kFrameHeaderBytesMax - header_bytes);
  header[0] = kFrameMagic;
  const KeyId id = key_id_of(self_public_);
  for (std::size_t i = 0; i < kKeyIdBytes; ++i) {
    header[1 + i] = static_cast<std::uint8_t>(id >> (8 * (kKeyIdBytes - 1 - i)));
  }
  std::size_t at = 1 + kKeyIdBytes;
  at += put_varint(header + at, boot_);
  at += put_varint(header + at, counter);
  MESH_CHECK(at == header_bytes, "frame header size");
  frame.erase(frame.begin(), frame.begin() + static_cast<std::ptrdiff_t>(kFrameHeaderBytesMax - header_bytes));
  const std::size_t plaintext_size = frame.size() - header_bytes;
  frame.resize(frame.size() + kFrameTagBytes);
  const auto nonce = make_nonce(boot_, counter);
  unsigned long long written = 0;
  std::uint8_t* text = frame.data() + header_bytes;  // libsodium allows c == m
  crypto_aead_xchacha20poly1305_ietf_encrypt(text, &written, text, plaintext_size, frame.data(),
                                             header_bytes, nullptr, nonce.data(),
                                             link->tx.data());
  MESH_CHECK(written == plaintext_size + kFrameTagBytes, "AEAD output size");
  return Ok{};
}

Result<Bytes, LinkError> LinkCrypto::seal(const PublicKey& peer, ByteView plaintext) {
  Bytes frame(kFrameHeaderBytesMax);
  frame.reserve(kFrameHeaderBytesMax + plaintext.size() + kFrameTagBytes);
  frame.insert(frame.end(), plaintext.begin(), plaintext.end());
  if (auto sealed = seal_in_place(peer, frame); !sealed.ok()) return sealed.error();
  return frame;
}

Status<LinkError> LinkCrypto::open_into(const PublicKey& peer, const FrameHeader& header,
                                        ByteView frame, Bytes& plaintext, bool* restarted) {
  PeerLink* link = link_for(peer);
  if (link == nullptr) return make_error(LinkError::bad_key, "peer key has no X25519 form");
  if (link->window.seen_or_too_old(header.boot, header.counter)) {
    return make_error(LinkError::replayed, "frame nonce already seen or too old");
  }
  MESH_CHECK(header.bytes >= kFrameHeaderBytesMin && frame.size() >= header.bytes + kFrameTagBytes,
             "open of a short frame");
  const auto nonce = make_nonce(header.boot, header.counter);
  plaintext.resize(frame.size() - header.bytes - kFrameTagBytes);
  unsigned long long written = 0;
  if (crypto_aead_xchacha20poly1305_ietf_decrypt(
          plaintext.data(), &written, nullptr, frame.data() + header.bytes,
          frame.size() - header.bytes, frame.data(), header.bytes, nonce.data(),
          link->rx.data()) != 0) {
    plaintext.clear();
    return make_error(LinkError::undecryptable, "frame does not authenticate");
  }
  const bool new_boot = link->window.mark(header.boot, header.counter);
  if (restarted != nullptr) *restarted = new_boot;
  return Ok{};
}

Result<Bytes, LinkError> LinkCrypto::open(const PublicKey& peer, const FrameHeader& header,
                                          ByteView frame) {
  Bytes plaintext;
  if (auto opened = open_into(peer, header, frame, plaintext); !opened.ok()) return opened.error();
  return plaintext;
}

std::vector<PublicKey> LinkCrypto::linked_keys() const {
  std::vector<PublicKey> keys;
  keys.reserve(links_.size());
  for (const auto& [key, link] : links_) keys.push_back(key);
  std::sort(keys.begin(), keys.end());
  return keys;
}

void LinkCrypto::retain_only(std::span<const PublicKey> members) {
  for (auto it = links_.begin(); it != links_.end();) {
    if (std::binary_search(members.begin(), members.end(), it->first)) {
      ++it;
      continue;
    }
    // A dropped link's session keys are wiped like the destructor wipes them.
    sodium_memzero(it->second.rx.data(), it->second.rx.size());
    sodium_memzero(it->second.tx.data(), it->second.tx.size());
    it = links_.erase(it);
  }
}

}  // namespace mesh::gossip

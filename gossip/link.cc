#include "gossip/link.h"

#include <sodium.h>

#include <algorithm>
#include <cstring>

namespace mesh::gossip {
namespace {

static_assert(crypto_aead_xchacha20poly1305_ietf_NPUBBYTES == 24);
static_assert(crypto_aead_xchacha20poly1305_ietf_ABYTES == kFrameTagBytes);
static_assert(crypto_kx_SESSIONKEYBYTES == 32);

void put_u64(std::uint8_t* out, std::uint64_t value) {
  for (int i = 7; i >= 0; --i, value >>= 8) out[i] = static_cast<std::uint8_t>(value);
}

std::uint64_t get_u64(const std::uint8_t* in) {
  std::uint64_t value = 0;
  for (int i = 0; i < 8; ++i) value = (value << 8) | in[i];
  return value;
}

std::array<std::uint8_t, 24> make_nonce(std::uint64_t boot, std::uint64_t counter) {
  std::array<std::uint8_t, 24> nonce{};
  put_u64(nonce.data(), boot);
  put_u64(nonce.data() + 8, counter);
  return nonce;
}

}  // namespace

KeyId key_id_of(const PublicKey& key) { return get_u64(key.data()); }

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
  if (frame.size() < kFrameHeaderBytes + kFrameTagBytes) {
    return make_error(LinkError::malformed, "frame shorter than header and tag");
  }
  if (frame[0] != kFrameMagic) return make_error(LinkError::malformed, "unknown frame magic");
  return FrameHeader{get_u64(&frame[1]), get_u64(&frame[9]), get_u64(&frame[17])};
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
  MESH_CHECK(frame.size() >= kFrameHeaderBytes, "seal_in_place without header room");
  PeerLink* link = link_for(peer);
  if (link == nullptr) return make_error(LinkError::bad_key, "peer key has no X25519 form");
  const std::uint64_t counter = counter_++;
  frame[0] = kFrameMagic;
  put_u64(&frame[1], key_id_of(self_public_));
  put_u64(&frame[9], boot_);
  put_u64(&frame[17], counter);
  const std::size_t plaintext_size = frame.size() - kFrameHeaderBytes;
  frame.resize(frame.size() + kFrameTagBytes);
  const auto nonce = make_nonce(boot_, counter);
  unsigned long long written = 0;
  std::uint8_t* text = frame.data() + kFrameHeaderBytes;  // libsodium allows c == m
  crypto_aead_xchacha20poly1305_ietf_encrypt(text, &written, text, plaintext_size, frame.data(),
                                             kFrameHeaderBytes, nullptr, nonce.data(),
                                             link->tx.data());
  MESH_CHECK(written == plaintext_size + kFrameTagBytes, "AEAD output size");
  return Ok{};
}

Result<Bytes, LinkError> LinkCrypto::seal(const PublicKey& peer, ByteView plaintext) {
  Bytes frame(kFrameHeaderBytes);
  frame.reserve(kFrameHeaderBytes + plaintext.size() + kFrameTagBytes);
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
  MESH_CHECK(frame.size() >= kFrameHeaderBytes + kFrameTagBytes, "open of a short frame");
  const auto nonce = make_nonce(header.boot, header.counter);
  plaintext.resize(frame.size() - kFrameHeaderBytes - kFrameTagBytes);
  unsigned long long written = 0;
  if (crypto_aead_xchacha20poly1305_ietf_decrypt(
          plaintext.data(), &written, nullptr, frame.data() + kFrameHeaderBytes,
          frame.size() - kFrameHeaderBytes, frame.data(), kFrameHeaderBytes, nonce.data(),
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

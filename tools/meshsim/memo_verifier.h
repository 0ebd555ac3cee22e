// A SignatureVerifier that remembers each unique (key, message, signature)
// it has checked (docs/SIMULATOR.md, "Signatures"). Every simulated node
// still runs its full acceptance path and calls verify(); only the Ed25519
// arithmetic is shared, since its result is the same at every node. A
// memo entry matches only when key, signature and message bytes are all
// equal, so a tampered record is always checked for real.
#pragma once

#include <cstdint>
#include <cstring>
#include <unordered_map>

#include "gossip/verifier.h"

namespace mesh::sim {

inline constexpr std::size_t kMemoEntriesMax = 500'000;  // at the bound the memo starts over

class MemoVerifier final : public gossip::SignatureVerifier {
 public:
  bool verify(const PublicKey& key, ByteView message, const Signature& signature) override {
    ++calls_;
    std::uint64_t tag = 0;
    std::memcpy(&tag, signature.data(), sizeof tag);
    auto it = memo_.find(tag);
    if (it != memo_.end() && it->second.key == key && it->second.signature == signature &&
        it->second.message.size() == message.size() &&
        std::memcmp(it->second.message.data(), message.data(), message.size()) == 0) {
      return it->second.valid;
    }
    ++verifications_;
    const bool valid = verify_detached(key, message, signature);
    if (memo_.size() >= kMemoEntriesMax) memo_.clear();
    memo_[tag] = Entry{key, signature, Bytes(message.begin(), message.end()), valid};
    return valid;
  }

  std::uint64_t calls() const { return calls_; }
  std::uint64_t verifications() const { return verifications_; }

 private:
  struct Entry {
    PublicKey key;
    Signature signature;
    Bytes message;
    bool valid;
  };
  std::unordered_map<std::uint64_t, Entry> memo_;
  std::uint64_t calls_ = 0;
  std::uint64_t verifications_ = 0;
};

}  // namespace mesh::sim

// Signature checks behind a small interface, so that the simulator can
// memoize the result per unique record (it is the same at every node) while
// every node still runs the same acceptance path.
#pragma once

#include "common/bytes.h"
#include "record/keys.h"

namespace mesh::gossip {

class SignatureVerifier {
 public:
  virtual ~SignatureVerifier() = default;
  // True when `signature` is a valid Ed25519 signature of `message` by `key`.
  // Must be a pure function of its arguments. May be called from the core's
  // strand only (the core never calls it concurrently).
  virtual bool verify(const PublicKey& key, ByteView message, const Signature& signature) = 0;
};

// libsodium, no caching: what the daemon uses.
class SodiumVerifier final : public SignatureVerifier {
 public:
  bool verify(const PublicKey& key, ByteView message, const Signature& signature) override {
    return verify_detached(key, message, signature);
  }
};

}  // namespace mesh::gossip

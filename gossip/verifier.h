// Pure functions of record bytes that the core calls through small
// interfaces: the Ed25519 signature check and the roster decode. Their
// results are the same at every node, so a simulator may compute each once
// per unique input and share it among its nodes, while every node still runs
// the same acceptance path (docs/SIMULATOR.md, "Signatures"). The daemon uses
// the plain implementations below.
#pragma once

#include <memory>

#include "common/bytes.h"
#include "common/result.h"
#include "gossip/indexed_roster.h"
#include "record/keys.h"
#include "record/roster.h"

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

class RosterDecoder {
 public:
  virtual ~RosterDecoder() = default;
  // decode_roster_payload(payload, seq), indexed. Must be a pure function of
  // its arguments (same result, same errors); the result is immutable.
  virtual Result<std::shared_ptr<const IndexedRoster>, RosterError> decode(ByteView payload,
                                                                           std::uint64_t seq) = 0;
};

// Decodes every time: what the daemon uses.
class PlainRosterDecoder final : public RosterDecoder {
 public:
  Result<std::shared_ptr<const IndexedRoster>, RosterError> decode(ByteView payload,
                                                                   std::uint64_t seq) override {
    auto roster = decode_roster_payload(payload, seq);
    if (!roster.ok()) return roster.error();
    return std::make_shared<const IndexedRoster>(std::move(roster.value()));
  }
};

}  // namespace mesh::gossip

// Ed25519 key pairs, detached signatures and the public-key hex codec.
// Key files live in key_file.cc.
#include "record/keys.h"

#include <sodium.h>

#include <algorithm>

#include "common/check.h"
#include "record/sodium_init.h"

static_assert(mesh::kPublicKeyBytes == crypto_sign_PUBLICKEYBYTES);
static_assert(mesh::kSecretKeyBytes == crypto_sign_SECRETKEYBYTES);
static_assert(mesh::kSignatureBytes == crypto_sign_BYTES);

namespace mesh {

PublicKey SecretKey::public_key() const {
  // libsodium's secret key is seed || public key.
  PublicKey key{};
  std::copy(bytes.begin() + crypto_sign_SEEDBYTES, bytes.end(), key.begin());
  return key;
}

KeyPair generate_key_pair() {
  ensure_sodium_initialized();
  KeyPair pair;
  MESH_CHECK(crypto_sign_keypair(pair.public_key.data(), pair.secret_key.bytes.data()) == 0,
             "crypto_sign_keypair failed");
  return pair;
}

KeyPair key_pair_from_seed(ByteView seed32) {
  MESH_CHECK(seed32.size() == crypto_sign_SEEDBYTES, "key seed must be 32 bytes");
  ensure_sodium_initialized();
  KeyPair pair;
  MESH_CHECK(crypto_sign_seed_keypair(pair.public_key.data(), pair.secret_key.bytes.data(),
                                      seed32.data()) == 0,
             "crypto_sign_seed_keypair failed");
  return pair;
}

Signature sign_detached(const SecretKey& key, ByteView message) {
  ensure_sodium_initialized();
  Signature signature{};
  MESH_CHECK(crypto_sign_detached(signature.data(), nullptr, message.data(), message.size(),
                                  key.bytes.data()) == 0,
             "crypto_sign_detached failed");
  return signature;
}

bool verify_detached(const PublicKey& key, ByteView message, const Signature& signature) {
  ensure_sodium_initialized();
  return crypto_sign_verify_detached(signature.data(), message.data(), message.size(),
                                     key.data()) == 0;
}

std::string public_key_to_hex(const PublicKey& key) { return to_hex(key); }

Result<PublicKey, KeyError> public_key_from_hex(std::string_view hex) {
  if (hex.size() != 2 * kPublicKeyBytes) {
    return make_error(KeyError::bad_encoding, "public key: " + std::to_string(hex.size()) +
                                                  " characters, expected 64 hex characters");
  }
  std::optional<Bytes> bytes = from_hex(hex);
  if (!bytes) return make_error(KeyError::bad_encoding, "public key: not hex");
  PublicKey key{};
  std::copy(bytes->begin(), bytes->end(), key.begin());
  return key;
}

const char* to_string(KeyError error) {
  switch (error) {
    case KeyError::bad_encoding: return "bad_encoding";
    case KeyError::file_unreadable: return "file_unreadable";
    case KeyError::file_permissions: return "file_permissions";
    case KeyError::file_malformed: return "file_malformed";
    case KeyError::file_write_failed: return "file_write_failed";
  }
  return "unknown";
}

}  // namespace mesh

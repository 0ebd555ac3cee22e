// Ed25519 identities (libsodium): one key pair per node and one for the
// operator. Public keys are written as 64 lower-case hex characters.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <string_view>

#include "common/bytes.h"
#include "common/result.h"

namespace mesh {

inline constexpr std::size_t kPublicKeyBytes = 32;
inline constexpr std::size_t kSecretKeyBytes = 64;  // libsodium layout: seed || public key
inline constexpr std::size_t kSignatureBytes = 64;

using PublicKey = std::array<std::uint8_t, kPublicKeyBytes>;
using Signature = std::array<std::uint8_t, kSignatureBytes>;

struct SecretKey {
  std::array<std::uint8_t, kSecretKeyBytes> bytes{};
  PublicKey public_key() const;
};

struct KeyPair {
  PublicKey public_key{};
  SecretKey secret_key;
};

enum class KeyError {
  bad_encoding,      // not 64 hex characters / wrong length
  file_unreadable,   // open or read failed
  file_permissions,  // group or others may read the secret key file
  file_malformed,    // the file does not hold a key
  file_write_failed, // could not create or write the file
};

// The enumerator's name ("file_permissions"), for logs and tools.
const char* to_string(KeyError error);

// Makes a new key pair from the operating system's randomness (libsodium).
KeyPair generate_key_pair();
// Derives the key pair of a 32-byte seed (deterministic; for tests and meshsim).
KeyPair key_pair_from_seed(ByteView seed32);

Signature sign_detached(const SecretKey& key, ByteView message);
bool verify_detached(const PublicKey& key, ByteView message, const Signature& signature);

std::string public_key_to_hex(const PublicKey& key);
Result<PublicKey, KeyError> public_key_from_hex(std::string_view hex);

// Key files hold one line: "meshnode-secret-key-v1 <128 hex chars>\n".
// write_secret_key_file creates the file with mode 0600 and refuses to
// overwrite an existing one. load_secret_key_file refuses a file that group
// or others can read, and one whose public half does not match its seed.
Status<KeyError> write_secret_key_file(const std::string& path, const SecretKey& key);
Result<SecretKey, KeyError> load_secret_key_file(const std::string& path);

}  // namespace mesh

// The API's bearer tokens (docs/API.md, "Authentication"). The node keeps
// only SHA-256 hashes of its tokens, each with a role, in a token file:
//   # comment
//   read  <64 hex: sha256 of the token>
//   admin <64 hex>
// A presented token is hashed and compared with every stored hash in
// constant time, so neither the file nor the timing of a check leaks a
// token. Immutable once loaded: any thread may call role_of().
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "common/result.h"

namespace mesh::api {

enum class Role { read, admin };
const char* to_string(Role role);

inline constexpr std::size_t kTokenFileBytesMax = 1024 * 1024;
inline constexpr std::size_t kTokensMax = 10'000;
inline constexpr std::size_t kTokenBytesMax = 256;  // a presented token; longer ones never match

enum class TokenError {
  unreadable,  // cannot open or read, or not a regular file
  malformed,   // a line that is not "read|admin <64 hex>"; the message names the line
  too_large,   // over kTokenFileBytesMax or kTokensMax
  empty,       // no token at all: nobody could use the API
  writable,    // group or others may write it: anyone could add an admin token
};

class TokenSet {
 public:
  // Reads and parses the token file. Refuses one that group or others may
  // write (mode 0664, 0666, 0620...): whoever can write it can make an
  // admin token. One that others may read is loaded; token_file_exposed()
  // says so.
  static Result<TokenSet, TokenError> load(const std::string& path);
  static Result<TokenSet, TokenError> parse(std::string_view text, std::string_view source);

  // The role of `token`, or nullopt for an unknown one. The highest role
  // wins if a token is listed twice. Constant time in the token's content.
  std::optional<Role> role_of(std::string_view token) const;
  std::size_t size() const { return entries_.size(); }

 private:
  std::vector<std::pair<Role, std::array<std::uint8_t, 32>>> entries_;
};

// The warning for a token file others may read (mode 0644), or nullopt.
// The file holds hashes, not tokens, and 256-bit tokens cannot be found
// from their hashes, so this is not refused; but a reader learns who may
// do what, and nobody but the node and its operator needs to. The sentence
// says the chmod to run.
std::optional<std::string> token_file_exposed(const std::string& path);

// SHA-256 of `token`, lower-case hex: the line's second field.
std::string token_hash_hex(std::string_view token);

}  // namespace mesh::api

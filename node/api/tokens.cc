#include "node/api/tokens.h"

#include <sodium.h>
#include <sys/stat.h>

#include <cstdio>

#include "common/bytes.h"
#include "common/regular_file.h"

namespace mesh::api {
namespace {

std::array<std::uint8_t, 32> sha256(std::string_view text) {
  std::array<std::uint8_t, 32> digest{};
  crypto_hash_sha256(digest.data(), reinterpret_cast<const unsigned char*>(text.data()), text.size());
  return digest;
}

std::string mode_text(mode_t mode) {
  char text[8];
  std::snprintf(text, sizeof text, "%04o", static_cast<unsigned>(mode & 07777));
  return text;
}

std::string_view trim(std::string_view text) {
  const auto first = text.find_first_not_of(" \t\r");
  if (first == std::string_view::npos) return {};
  const auto last = text.find_last_not_of(" \t\r");
  return text.substr(first, last - first + 1);
}

}  // namespace

const char* to_string(Role role) { return role == Role::admin ? "admin" : "read"; }

std::string token_hash_hex(std::string_view token) {
  const auto digest = sha256(token);
  return to_hex(ByteView(digest.data(), digest.size()));
}

Result<TokenSet, TokenError> TokenSet::load(const std::string& path) {
  auto text = read_regular_file(path, kTokenFileBytesMax);
  if (!text) {
    return make_error(text.code() == FileReadError::too_large ? TokenError::too_large : TokenError::unreadable,
                      "token file '" + path + "' " + text.message());
  }
  struct stat st {};
  if (::stat(path.c_str(), &st) == 0 && (st.st_mode & (S_IWGRP | S_IWOTH)) != 0) {
    return make_error(TokenError::writable, "token file '" + path + "' has mode " + mode_text(st.st_mode) +
                                                ": group or others may write it, and so make themselves an "
                                                "admin token; run `chmod 0600 " + path + "` (0640 for a group that only reads)");
  }
  return parse(text.value(), "token file '" + path + "'");
}

std::optional<std::string> token_file_exposed(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0 || (st.st_mode & S_IROTH) == 0) return std::nullopt;
  return "token file '" + path + "' has mode " + mode_text(st.st_mode) +
         ": others may read it (hashes, not tokens, but nobody else needs them); run `chmod 0600 " + path +
         "` (0640 for a group that only reads)";
}

Result<TokenSet, TokenError> TokenSet::parse(std::string_view text, std::string_view source) {
  TokenSet set;
  std::size_t line_number = 0;
  while (!text.empty()) {
    const auto end = text.find('\n');
    std::string_view line = trim(text.substr(0, end));
    text = end == std::string_view::npos ? std::string_view{} : text.substr(end + 1);
    ++line_number;
    if (line.empty() || line.front() == '#') continue;
    const auto space = line.find_first_of(" \t");
    const std::string_view role = line.substr(0, space);
    const std::string_view hash = space == std::string_view::npos ? "" : trim(line.substr(space));
    auto bytes = from_hex(hash);
    if ((role != "read" && role != "admin") || !bytes || bytes->size() != 32) {
      return make_error(TokenError::malformed,
                        std::string(source) + " line " + std::to_string(line_number) +
                            ": expected 'read <sha256 hex>' or 'admin <sha256 hex>'");
    }
    if (set.entries_.size() >= kTokensMax) {
      return make_error(TokenError::too_large, std::string(source) + ": more than " +
                                                   std::to_string(kTokensMax) + " tokens");
    }
    std::array<std::uint8_t, 32> digest{};
    std::copy(bytes->begin(), bytes->end(), digest.begin());
    set.entries_.emplace_back(role == "admin" ? Role::admin : Role::read, digest);
  }
  if (set.entries_.empty()) {
    return make_error(TokenError::empty, std::string(source) + " holds no token");
  }
  return set;
}

std::optional<Role> TokenSet::role_of(std::string_view token) const {
  if (token.empty() || token.size() > kTokenBytesMax) return std::nullopt;
  const auto digest = sha256(token);
  std::optional<Role> role;
  for (const auto& [entry_role, entry_digest] : entries_) {
    // Every entry is compared, matched or not: the time depends on the
    // number of entries only.
    const bool match = sodium_memcmp(digest.data(), entry_digest.data(), digest.size()) == 0;
    if (match && (!role || entry_role == Role::admin)) role = entry_role;
  }
  return role;
}

}  // namespace mesh::api

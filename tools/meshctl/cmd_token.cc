// meshctl token new --role read|admin: a new API bearer token (32 random
// bytes as 64 hex) and the line for the node's token file, which keeps only
// its SHA-256 (docs/API.md, "Authentication").
#include <sodium.h>

#include <cstdio>

#include <nlohmann/json.hpp>

#include "common/bytes.h"
#include "node/api/tokens.h"
#include "tools/meshctl/commands.h"
#include "tools/meshctl/exit_codes.h"

namespace mesh::ctl {

int run_token_new(const TokenOptions& options) {
  if (options.role != "read" && options.role != "admin") {
    std::fprintf(stderr, "meshctl token new: --role must be read or admin\n");
    return kExitUsage;
  }
  if (sodium_init() < 0) {
    std::fprintf(stderr, "meshctl token new: libsodium failed to initialise\n");
    return kExitUsage;
  }
  Bytes secret(32);
  randombytes_buf(secret.data(), secret.size());
  const std::string token = to_hex(secret);
  const std::string line = options.role + " " + api::token_hash_hex(token);
  if (options.json) {
    std::printf("%s\n", nlohmann::json{{"token", token}, {"role", options.role}, {"line", line}}.dump().c_str());
  } else {
    std::printf("token: %s\nadd this line to the node's token file (it holds only the hash):\n%s\n",
                token.c_str(), line.c_str());
  }
  return kExitOk;
}

}  // namespace mesh::ctl

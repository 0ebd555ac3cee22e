// meshctl keygen (a new key pair) and key show (the public half of a key
// file that exists: the `key` to put in a roster's [[servers]] entry, or
// the operator_key of every node's config).
#include <cstdio>

#include <nlohmann/json.hpp>

#include "record/keys.h"
#include "tools/meshctl/commands.h"
#include "tools/meshctl/exit_codes.h"

namespace mesh::ctl {

int run_keygen(const KeygenOptions& options) {
  KeyPair pair = generate_key_pair();
  auto written = write_secret_key_file(options.out_path, pair.secret_key);
  if (!written) {
    std::fprintf(stderr, "meshctl keygen: %s\n", written.message().c_str());
    return kExitUsage;
  }
  std::string public_hex = public_key_to_hex(pair.public_key);
  if (options.json) {
    nlohmann::json out = {{"secret_key_file", options.out_path}, {"public_key", public_hex}};
    std::printf("%s\n", out.dump().c_str());
  } else {
    std::printf("%s\n", public_hex.c_str());
  }
  return kExitOk;
}

int run_key_show(const KeyShowOptions& options) {
  auto key = load_secret_key_file(options.path);
  if (!key) {
    std::fprintf(stderr, "meshctl key show: %s\n", key.message().c_str());
    return kExitUsage;
  }
  const std::string public_hex = public_key_to_hex(key->public_key());
  if (options.json) {
    std::printf("%s\n", nlohmann::json{{"secret_key_file", options.path}, {"public_key", public_hex}}.dump().c_str());
  } else {
    std::printf("%s\n", public_hex.c_str());
  }
  return kExitOk;
}

}  // namespace mesh::ctl

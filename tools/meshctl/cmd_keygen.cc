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

}  // namespace mesh::ctl

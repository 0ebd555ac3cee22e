// Fuzz target: the node config file (node/config.h, docs/CONFIG.md "The node
// config file"), what `meshnode --config` and `--check-config` read. Input:
// the text of a config file.
//
// Properties:
// - an accepted file keeps every string within kConfigStringBytesMax, the
//   API's thread count within kApiThreadsMax, and the gossip queue able to
//   hold the largest frame;
// - the effective config written back (describe_config, what `--print`
//   shows) reads as the same config (the contract in node/config.h), and
//   writing that again gives the same text;
// - text over kConfigFileBytesMax is refused.
#include <cstddef>
#include <cstdint>
#include <string>

#include "gossip/config.h"
#include "node/config.h"
#include "tests/fuzz/fuzz_support.h"

namespace {

using namespace mesh;
using namespace mesh::node;

constexpr std::string_view kSource = "config fuzz.toml";

void check_accepted(const NodeConfig& config) {
  for (const std::string* text :
       {&config.key_file, &config.data_dir, &config.roster_file, &config.gossip.source_address,
        &config.probe.source_address, &config.self_check.service, &config.api.token_file,
        &config.api.tls_cert_file, &config.api.tls_key_file}) {
    FUZZ_CHECK(text->size() <= kConfigStringBytesMax);
  }
  FUZZ_CHECK(config.api.threads <= kApiThreadsMax);
  FUZZ_CHECK(config.gossip.queue_bytes_max >= gossip::kFrameBytesMax);
  const std::string described = describe_config(config);
  auto again = parse_node_config(described, kSource);
  FUZZ_CHECK(again.ok());
  FUZZ_CHECK(*again == config);
  FUZZ_CHECK(describe_config(*again) == described);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  auto config = parse_node_config(fuzz::text_of(data, size), kSource);
  if (!config.ok()) {
    if (size > kConfigFileBytesMax) FUZZ_CHECK(config.code() == ConfigError::too_large);
    return 0;
  }
  FUZZ_CHECK(size <= kConfigFileBytesMax);
  check_accepted(*config);
  return 0;
}

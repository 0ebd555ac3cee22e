// Internal to the config reader (node/config.cc): the [api] table.
#pragma once

#include "node/config.h"
#include "node/config_table.h"

namespace mesh::node {

// listen ("" turns the API off), token_file, tls_cert_file and tls_key_file
// (both or neither), insecure_plaintext; a non-loopback listen needs TLS
// unless insecure_plaintext is true.
Status<ConfigError> read_api_table(const ConfigTable& table, ApiConfig& api);

}  // namespace mesh::node

#include "node/config_api.h"

#include "common/toml.h"
#include "record/address.h"

namespace mesh::node {

bool is_loopback_host(std::string_view host) {
  return host == "::1" || (is_ipv4_literal(host) && host.starts_with("127."));
}

Status<ConfigError> read_api_table(const ConfigTable& t, ApiConfig& api) {
  if (auto s = t.allow_only({"listen", "token_file", "tls_cert_file", "tls_key_file", "insecure_plaintext",
                                "threads"});
      !s) {
    return s;
  }
  std::string listen;
  const toml::node* listen_node = nullptr;
  if (auto s = t.string("listen", false, listen, listen_node); !s) return s;
  if (listen_node != nullptr) {
    if (listen.empty()) {
      api.listen.reset();
    } else {
      auto endpoint = parse_endpoint(listen, kDefaultApiPort);
      if (!endpoint || (!is_ipv4_literal(endpoint->host) && !is_ipv6_literal(endpoint->host))) {
        return t.fail(ConfigError::bad_value, *listen_node, "listen",
                      "must be \"\" (no API) or IP:port / [IPv6]:port (default port " +
                          std::to_string(kDefaultApiPort) + "), got '" + listen + "'");
      }
      api.listen = *endpoint;
    }
  }
  const toml::node* node = nullptr;
  if (auto s = t.string("token_file", false, api.token_file, node); !s) return s;
  if (node != nullptr && api.token_file.empty()) {
    return t.fail(ConfigError::bad_value, *node, "token_file", "must be a path");
  }
  const toml::node* cert = nullptr;
  const toml::node* key = nullptr;
  if (auto s = t.string("tls_cert_file", false, api.tls_cert_file, cert); !s) return s;
  if (auto s = t.string("tls_key_file", false, api.tls_key_file, key); !s) return s;
  if (api.tls_cert_file.empty() != api.tls_key_file.empty()) {
    return t.fail(ConfigError::bad_value, cert != nullptr ? *cert : *key,
                  cert != nullptr ? "tls_cert_file" : "tls_key_file",
                  "tls_cert_file and tls_key_file go together");
  }
  if (auto s = t.boolean("insecure_plaintext", api.insecure_plaintext); !s) return s;
  if (auto s = t.integer("threads", 1, kApiThreadsMax, api.threads); !s) return s;
  if (api.listen && !is_loopback_host(api.listen->host) && api.tls_cert_file.empty() &&
      !api.insecure_plaintext) {
    return t.fail(ConfigError::bad_value, *listen_node, "listen",
                  "'" + listen + "' is not a loopback address: the API serves HTTPS only there "
                  "(set tls_cert_file and tls_key_file), or set insecure_plaintext = true to send "
                  "bearer tokens in clear");
  }
  return Ok{};
}

}  // namespace mesh::node

// describe_config: the effective config as TOML, in the order and with the
// names of docs/CONFIG.md, "The node config file".
#include <cstdio>
#include <string>

#include "node/config.h"
#include "node/config_panel.h"
#include "record/roster_toml.h"

namespace mesh::node {
namespace {

std::string line(std::string_view key, const std::string& value) {
  return std::string(key) + " = " + value + "\n";
}

std::string number(std::int64_t value) { return std::to_string(value); }
std::string boolean(bool value) { return value ? "true" : "false"; }

}  // namespace

std::string describe_config(const NodeConfig& c) {
  std::string out = "# meshnode config, defaults filled in (docs/CONFIG.md)\n";
  out += line("node_id", toml_quoted(c.node_id));
  out += line("key_file", toml_quoted(c.key_file));
  out += line("operator_key", toml_quoted(public_key_to_hex(c.operator_key)));
  out += line("data_dir", toml_quoted(c.data_dir));
  out += line("roster_file", toml_quoted(c.roster_file));
  out += "\n[gossip]\n";
  out += line("listen", toml_quoted(format_endpoint(c.gossip.listen)));
  out += line("source_address", toml_quoted(c.gossip.source_address));
  out += line("connect_timeout_ms", number(c.gossip.connect_timeout_ms));
  out += line("idle_timeout_ms", number(c.gossip.idle_timeout_ms));
  out += line("queue_bytes_max", number(static_cast<std::int64_t>(c.gossip.queue_bytes_max)));
  out += line("backoff_min_ms", number(c.gossip.backoff_min_ms));
  out += line("backoff_max_ms", number(c.gossip.backoff_max_ms));
  out += "\n[probe]\n";
  out += line("tls_every", number(c.probe.tls_every));
  out += line("connect_timeout_ms", number(c.probe.connect_timeout_ms));
  out += line("tls_timeout_ms", number(c.probe.tls_timeout_ms));
  out += line("concurrent_max", number(c.probe.concurrent_max));
  out += line("source_address", toml_quoted(c.probe.source_address));
  out += "\n[self_check]\n";
  out += line("listener", toml_quoted(c.self_check.listener ? format_endpoint(*c.self_check.listener)
                                                       : std::string()));
  out += line("listener_tls", boolean(c.self_check.listener_tls));
  out += line("service", toml_quoted(c.self_check.service));
  out += line("exec_timeout_ms", number(c.self_check.exec_timeout_ms));
  out += "\n[volume]\n";
  out += line("cap_bytes_per_day", number(static_cast<std::int64_t>(c.volume.cap_bytes_per_day)));
  out += "\n[log]\n";
  out += line("format", toml_quoted(to_string(c.log.format)));
  out += line("level", toml_quoted(to_string(c.log.level)));
  out += "\n[api]\n";
  out += line("listen", toml_quoted(c.api.listen ? format_endpoint(*c.api.listen) : std::string()));
  out += line("token_file", toml_quoted(c.api.token_file));
  out += line("tls_cert_file", toml_quoted(c.api.tls_cert_file));
  out += line("tls_key_file", toml_quoted(c.api.tls_key_file));
  out += line("insecure_plaintext", boolean(c.api.insecure_plaintext));
  out += line("threads", number(c.api.threads));
  out += describe_panel(c.panel);
  out += describe_alerts(c.alerts);
  return out;
}

}  // namespace mesh::node

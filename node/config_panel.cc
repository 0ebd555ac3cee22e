#include "node/config_panel.h"

#include "common/http_url.h"
#include "common/toml.h"
#include "record/address.h"
#include "record/roster_toml.h"

namespace mesh::node {
namespace {

constexpr std::int64_t kHourMs = 3'600'000;
constexpr std::size_t kListMax = 4096;       // candidates: as many as a roster's servers
constexpr std::size_t kHostKeysMax = 64;     // panel hosts named for one server
constexpr std::size_t kHostKeyBytesMax = 256;

Status<ConfigError> read_url(const ConfigTable& t, std::string_view key, std::string& out) {
  const toml::node* node = nullptr;
  if (auto s = t.string(key, false, out, node); !s || node == nullptr || out.empty()) return s;
  if (auto url = parse_http_url(out); !url) {
    return t.fail(ConfigError::bad_value, *node, key,
                  "must be http://host[:port][/path] or https://... (" + url.message() + "), got '" + out + "'");
  }
  return Ok{};
}

// An array of server ids.
Status<ConfigError> read_ids(const ConfigTable& t, std::string_view key, std::vector<ServerId>& out) {
  const toml::node* node = t.get(key);
  if (node == nullptr) return Ok{};
  const toml::array* array = node->as_array();
  if (array == nullptr || array->size() > kListMax) {
    return t.fail(ConfigError::wrong_type, *node, key, "must be an array of at most 4096 server ids");
  }
  out.clear();
  for (const toml::node& item : *array) {
    const auto* text = item.as_string();
    if (text == nullptr || !is_valid_server_id(text->get())) {
      return t.fail(ConfigError::bad_value, item, key, "every entry must be a server id ([a-z0-9._-], 1..64 bytes)");
    }
    out.push_back(text->get());
  }
  return Ok{};
}

// [panel.hosts]: "server-id" = ["host uuid or remark", ...]
Status<ConfigError> read_hosts(const ConfigTable& t, std::map<ServerId, std::vector<std::string>>& out) {
  const toml::table* hosts = nullptr;
  if (auto s = t.subtable("hosts", hosts); !s || hosts == nullptr) return s;
  const ConfigTable table(*hosts, "panel.hosts", t.source());
  for (const auto& [key, value] : *hosts) {
    const std::string id(key.str());
    const toml::array* array = value.as_array();
    if (!is_valid_server_id(id)) return table.fail(ConfigError::bad_value, value, id, "is not a server id");
    if (array == nullptr || array->empty() || array->size() > kHostKeysMax) {
      return table.fail(ConfigError::wrong_type, value, id, "must be an array of 1..64 host uuids or remarks");
    }
    for (const toml::node& item : *array) {
      const auto* text = item.as_string();
      if (text == nullptr || text->get().empty() || text->get().size() > kHostKeyBytesMax ||
          !is_printable_utf8(text->get())) {
        return table.fail(ConfigError::bad_value, item, id, "every entry must be a host's uuid or remark (1..256 bytes)");
      }
      out[id].push_back(text->get());
    }
  }
  return Ok{};
}

std::string ids_toml(const std::vector<std::string>& ids) {
  std::string out = "[";
  for (const auto& id : ids) out += (out.size() > 1 ? ", " : "") + toml_quoted(id);
  return out + "]";
}

}  // namespace

const char* to_string(PanelKind kind) {
  switch (kind) {
    case PanelKind::none: return "";
    case PanelKind::remnawave: return "remnawave";
    case PanelKind::marzban: return "marzban";
  }
  return "?";
}

Status<ConfigError> read_panel_table(const ConfigTable& t, PanelConfig& panel) {
  if (auto s = t.allow_only({"kind", "url", "credentials_file", "dry_run", "changes_per_minute", "interval_ms",
                             "timeout_ms", "candidates", "hosts"});
      !s) {
    return s;
  }
  if (auto s = t.choice("kind", {PanelKind::none, PanelKind::remnawave, PanelKind::marzban}, panel.kind); !s) return s;
  if (auto s = read_url(t, "url", panel.url); !s) return s;
  const toml::node* node = nullptr;
  if (auto s = t.string("credentials_file", false, panel.credentials_file, node); !s) return s;
  if (auto s = t.boolean("dry_run", panel.dry_run); !s) return s;
  if (auto s = t.integer("changes_per_minute", 1, 10'000, panel.changes_per_minute); !s) return s;
  if (auto s = t.integer("interval_ms", 10'000, kHourMs, panel.interval_ms); !s) return s;
  if (auto s = t.integer("timeout_ms", 1'000, 120'000, panel.timeout_ms); !s) return s;
  if (auto s = read_ids(t, "candidates", panel.candidates); !s) return s;
  if (auto s = read_hosts(t, panel.hosts); !s) return s;
  if (panel.kind != PanelKind::none && (panel.url.empty() || panel.credentials_file.empty())) {
    return t.fail(ConfigError::bad_value, *t.get("kind"), "kind",
                  std::string("'") + to_string(panel.kind) + "' needs url and credentials_file");
  }
  return Ok{};
}

Status<ConfigError> read_alerts_table(const ConfigTable& t, AlertsConfig& alerts) {
  if (auto s = t.allow_only({"webhook_url", "webhook_secret_file", "telegram_token_file", "telegram_chat_id",
                             "telegram_api", "status_page_url", "flap_changes", "flap_window_ms", "settle_ms",
                             "timeout_ms", "candidates"});
      !s) {
    return s;
  }
  const toml::node* node = nullptr;
  if (auto s = read_url(t, "webhook_url", alerts.webhook_url); !s) return s;
  if (auto s = t.string("webhook_secret_file", false, alerts.webhook_secret_file, node); !s) return s;
  if (alerts.webhook_url.empty() != alerts.webhook_secret_file.empty()) {
    const toml::node& at = t.get("webhook_url") ? *t.get("webhook_url") : *t.get("webhook_secret_file");
    return t.fail(ConfigError::bad_value, at, "webhook_url", "webhook_url and webhook_secret_file go together");
  }
  if (auto s = t.string("telegram_token_file", false, alerts.telegram_token_file, node); !s) return s;
  if (auto s = t.string("telegram_chat_id", false, alerts.telegram_chat_id, node); !s) return s;
  if (alerts.telegram_token_file.empty() != alerts.telegram_chat_id.empty()) {
    const toml::node& at = t.get("telegram_token_file") ? *t.get("telegram_token_file") : *t.get("telegram_chat_id");
    return t.fail(ConfigError::bad_value, at, "telegram_chat_id", "telegram_token_file and telegram_chat_id go together");
  }
  if (auto s = read_url(t, "telegram_api", alerts.telegram_api); !s) return s;
  if (auto s = t.string("status_page_url", false, alerts.status_page_url, node); !s) return s;
  if (node != nullptr && !is_printable_utf8(alerts.status_page_url)) {
    return t.fail(ConfigError::bad_value, *node, "status_page_url", "must be printable text");
  }
  if (auto s = t.integer("flap_changes", 2, 1000, alerts.flap_changes); !s) return s;
  if (auto s = t.integer("flap_window_ms", 60'000, 24 * kHourMs, alerts.flap_window_ms); !s) return s;
  if (auto s = t.integer("settle_ms", 10'000, 24 * kHourMs, alerts.settle_ms); !s) return s;
  if (auto s = t.integer("timeout_ms", 1'000, 120'000, alerts.timeout_ms); !s) return s;
  return read_ids(t, "candidates", alerts.candidates);
}

std::string describe_panel(const PanelConfig& p) {
  std::string out = "\n[panel]\n";
  out += "kind = " + toml_quoted(to_string(p.kind)) + "\n";
  out += "url = " + toml_quoted(p.url) + "\n";
  out += "credentials_file = " + toml_quoted(p.credentials_file) + "\n";
  out += std::string("dry_run = ") + (p.dry_run ? "true" : "false") + "\n";
  out += "changes_per_minute = " + std::to_string(p.changes_per_minute) + "\n";
  out += "interval_ms = " + std::to_string(p.interval_ms) + "\n";
  out += "timeout_ms = " + std::to_string(p.timeout_ms) + "\n";
  out += "candidates = " + ids_toml(p.candidates) + "\n";
  if (!p.hosts.empty()) {
    out += "\n[panel.hosts]\n";
    for (const auto& [id, keys] : p.hosts) out += toml_quoted(id) + " = " + ids_toml(keys) + "\n";
  }
  return out;
}

std::string describe_alerts(const AlertsConfig& a) {
  std::string out = "\n[alerts]\n";
  out += "webhook_url = " + toml_quoted(a.webhook_url) + "\n";
  out += "webhook_secret_file = " + toml_quoted(a.webhook_secret_file) + "\n";
  out += "telegram_token_file = " + toml_quoted(a.telegram_token_file) + "\n";
  out += "telegram_chat_id = " + toml_quoted(a.telegram_chat_id) + "\n";
  out += "telegram_api = " + toml_quoted(a.telegram_api) + "\n";
  out += "status_page_url = " + toml_quoted(a.status_page_url) + "\n";
  out += "flap_changes = " + std::to_string(a.flap_changes) + "\n";
  out += "flap_window_ms = " + std::to_string(a.flap_window_ms) + "\n";
  out += "settle_ms = " + std::to_string(a.settle_ms) + "\n";
  out += "timeout_ms = " + std::to_string(a.timeout_ms) + "\n";
  out += "candidates = " + ids_toml(a.candidates) + "\n";
  return out;
}

}  // namespace mesh::node

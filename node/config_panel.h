// Internal to the config reader (node/config.cc): the [panel] and [alerts]
// tables (docs/CONFIG.md; docs/PANELS.md).
#pragma once

#include "node/config.h"
#include "node/config_table.h"

namespace mesh::node {

// kind ("" off, "remnawave", "marzban"), url (required with a kind),
// credentials_file, dry_run, changes_per_minute, interval_ms, timeout_ms,
// candidates, and [panel.hosts].
Status<ConfigError> read_panel_table(const ConfigTable& table, PanelConfig& panel);

// webhook_url and webhook_secret_file (together), telegram_token_file and
// telegram_chat_id (together), telegram_api, status_page_url, the flapping
// damper, timeout_ms, candidates.
Status<ConfigError> read_alerts_table(const ConfigTable& table, AlertsConfig& alerts);

// Their part of describe_config.
std::string describe_panel(const PanelConfig& panel);
std::string describe_alerts(const AlertsConfig& alerts);

}  // namespace mesh::node

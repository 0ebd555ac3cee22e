// The panel sync's and the alerts' state as the API shows it (GET /v1/mesh,
// /metrics; docs/API.md), filled by the panel worker (node/panel/). Plain
// values: the snapshot holds a copy.
#pragma once

#include <cstdint>
#include <string>

#include "common/time.h"

namespace mesh::api {

struct SyncStatus {
  std::string kind;                 // "remnawave", "marzban"; "" when off
  bool dry_run = false;
  std::string right;                // rotation::WriteRight: owner, not_owner, ...
  std::string owner;                // the owner by this node's view, "" for none
  UnixMs last_sync_ms = 0;          // the last round that read the hosts and applied its plan
  std::string last_error;           // of the last round, "" when it succeeded
  std::uint32_t failures_in_row = 0;
  std::uint32_t hosts = 0, hosts_disabled = 0, hosts_unknown = 0;  // as of the last read
  std::uint64_t rounds_total = 0, requests_failed_total = 0;
  std::uint64_t enabled_total = 0, disabled_total = 0, kept_last_total = 0, deferred_total = 0;
  std::uint64_t reenabled_by_hand_total = 0;
};

struct AlertStatus {
  bool enabled = false;
  std::uint32_t queued = 0;                   // awaiting delivery
  std::uint64_t webhook_sent_total = 0, webhook_failed_total = 0;   // failed: attempts
  std::uint64_t telegram_sent_total = 0, telegram_failed_total = 0;
  std::uint64_t dropped_total = 0;            // queue full, or attempts exhausted
};

}  // namespace mesh::api

// What the panel worker tells the rest of the daemon (node/panel/): its log
// lines, handed to the daemon's logger, and its state for /v1/mesh and
// /metrics (node/api/panel_status.h; the snapshot copies it).
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "common/time.h"
#include "node/api/panel_status.h"

namespace mesh::panel {

enum class Severity { info, warn, error };
using Fields = std::vector<std::pair<std::string, std::string>>;
// Called on the worker's thread; the daemon's logger is thread-safe.
using LogSink = std::function<void(Severity, const std::string& event, const std::string& message, const Fields&)>;

using SyncStatus = api::SyncStatus;
using AlertStatus = api::AlertStatus;

}  // namespace mesh::panel

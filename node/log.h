// The daemon's logs (spdlog): one line per event that matters to an
// operator (a verdict or route transition, a failure that starts or ends,
// a roster accepted, shutdown), never one per probe or frame. Text by
// default; with `[log] format = "json"` (or --log-format json) one JSON
// object per line: {"time": RFC 3339 UTC, "level", "event", "msg", and the
// event's fields}, so a log shipper needs no parser.
//
// Thread safety: spdlog's default logger is thread-safe; set_log_* are
// called on the daemon's strand.
#pragma once

#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "node/config.h"

namespace mesh::node {

using LogFields = std::vector<std::pair<std::string, std::string>>;

// Installs the format (stderr, either format) and the level.
void set_log_format(LogFormat format);
void set_log_level(LogLevel level);

// One event: `event` names its kind ("verdict", "probe_failure", ...),
// `message` is the sentence a human reads, `fields` the same facts as
// key/value pairs for the JSON form.
void log_event(LogLevel level, std::string_view event, std::string_view message,
               const LogFields& fields = {});

// The JSON line of an event (without the time), for tests.
std::string json_event_line(std::string_view time, LogLevel level, std::string_view event,
                            std::string_view message, const LogFields& fields);

}  // namespace mesh::node

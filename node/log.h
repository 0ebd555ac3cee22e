// The daemon's logs (spdlog): one line per event that matters to an
// operator (a verdict or route transition, a failure that starts or ends,
// a roster accepted, shutdown), never one per probe or frame. Text by
// default; with `[log] format = "json"` (or --log-format json) one JSON
// object per line: {"time": RFC 3339 UTC, "level", "event", "msg", and the
// event's fields}, so a log shipper needs no parser. Both forms spell a
// level as the config does (trace, debug, info, warn, error), and both
// give the time in UTC:
//   2026-12-05T10:00:00.123Z warn verdict: n3: ok -> unavailable: Server unavailable
//   {"time":"2026-12-05T10:00:00.123Z","level":"warn","event":"verdict","msg":"...","server":"n3",...}
// In JSON, numbers and booleans are JSON numbers and booleans.
//
// Thread safety: spdlog's default logger is thread-safe; set_log_* are
// called on the daemon's strand.
#pragma once

#include <concepts>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

#include "node/config.h"

namespace mesh::node {

// One field's value: a string, a whole number or a boolean, written in a
// JSON line as that JSON type.
class LogValue {
 public:
  using Variant = std::variant<std::string, std::int64_t, std::uint64_t, bool>;
  LogValue(std::string text) : value_(std::move(text)) {}
  LogValue(std::string_view text) : value_(std::string(text)) {}
  LogValue(const char* text) : value_(std::string(text)) {}
  LogValue(bool flag) : value_(flag) {}
  template <std::signed_integral T>
  LogValue(T number) : value_(static_cast<std::int64_t>(number)) {}
  template <std::unsigned_integral T>
    requires(!std::same_as<T, bool>)
  LogValue(T number) : value_(static_cast<std::uint64_t>(number)) {}

  const Variant& value() const { return value_; }
  bool operator==(const LogValue&) const = default;

 private:
  Variant value_;
};

using LogFields = std::vector<std::pair<std::string, LogValue>>;

// The level as the config spells it: "trace", "debug", "info", "warn", "error".
const char* log_level_name(LogLevel level);

// Installs the format (stderr, either format) and the level.
void set_log_format(LogFormat format);
void set_log_level(LogLevel level);

// One event: `event` names its kind ("verdict", "probe_failure", ...),
// `message` is the sentence a human reads, `fields` the same facts as
// key/value pairs for the JSON form.
void log_event(LogLevel level, std::string_view event, std::string_view message,
               const LogFields& fields = {});

// The text line of an event, and its JSON line, for tests.
std::string text_event_line(std::string_view time, LogLevel level, std::string_view event,
                            std::string_view message);
std::string json_event_line(std::string_view time, LogLevel level, std::string_view event,
                            std::string_view message, const LogFields& fields);

}  // namespace mesh::node

#include "node/log.h"

#include <spdlog/sinks/stdout_sinks.h>
#include <spdlog/spdlog.h>

#include <chrono>
#include <ctime>
#include <nlohmann/json.hpp>

namespace mesh::node {
namespace {

LogFormat g_format = LogFormat::text;

spdlog::level::level_enum spd_level(LogLevel level) {
  switch (level) {
    case LogLevel::trace: return spdlog::level::trace;
    case LogLevel::debug: return spdlog::level::debug;
    case LogLevel::info: return spdlog::level::info;
    case LogLevel::warn: return spdlog::level::warn;
    case LogLevel::error: return spdlog::level::err;
  }
  return spdlog::level::info;
}

std::string utc_now() {
  const auto now = std::chrono::system_clock::now();
  const std::time_t seconds = std::chrono::system_clock::to_time_t(now);
  const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(now.time_since_epoch()).count() % 1000;
  std::tm tm{};
  gmtime_r(&seconds, &tm);
  char buffer[64];
  std::snprintf(buffer, sizeof buffer, "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ", tm.tm_year + 1900,
                tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, static_cast<int>(ms));
  return buffer;
}

}  // namespace

const char* log_level_name(LogLevel level) { return to_string(level); }

// spdlog's own time (local) and level names ("warning", "critical") are
// left out: each line carries our UTC time and the config's spelling.
void set_log_format(LogFormat format) {
  g_format = format;
  auto logger = spdlog::get("meshnode");
  if (logger == nullptr) logger = spdlog::stderr_logger_mt("meshnode");
  spdlog::set_default_logger(logger);
  spdlog::set_pattern("%v");
}

void set_log_level(LogLevel level) { spdlog::set_level(spd_level(level)); }

std::string text_event_line(std::string_view time, LogLevel level, std::string_view event,
                            std::string_view message) {
  std::string line;
  line.reserve(time.size() + event.size() + message.size() + 16);
  line.append(time).append(" ").append(log_level_name(level)).append(" ");
  line.append(event).append(": ").append(message);
  return line;
}

std::string json_event_line(std::string_view time, LogLevel level, std::string_view event,
                            std::string_view message, const LogFields& fields) {
  nlohmann::ordered_json line;
  line["time"] = time;
  line["level"] = log_level_name(level);
  line["event"] = event;
  line["msg"] = message;
  for (const auto& field : fields) {
    std::visit([&](const auto& value) { line[field.first] = value; }, field.second.value());
  }
  return line.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

void log_event(LogLevel level, std::string_view event, std::string_view message,
               const LogFields& fields) {
  const auto spd = spd_level(level);
  if (!spdlog::should_log(spd)) return;
  const std::string line = g_format == LogFormat::json ? json_event_line(utc_now(), level, event, message, fields)
                                                       : text_event_line(utc_now(), level, event, message);
  spdlog::log(spd, "{}", line);
}

}  // namespace mesh::node

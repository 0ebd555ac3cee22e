// Delivers the alerts this node sends as the owner (node/rotation/
// alert_tracker.h) to a webhook and to Telegram (docs/PANELS.md, "Alerts"),
// on the panel worker's thread. Each channel sends in order, one message
// at a time; a message that fails is retried with backoff (1 s doubling to
// 5 min) up to kAlertAttemptsMax times, then dropped and counted; the queue
// holds at most kAlertQueueMax, the oldest dropped first. Nothing here ever
// blocks the node.
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "common/http_url.h"
#include "node/panel/status.h"
#include "node/rotation/alert_tracker.h"

namespace boost::asio {
class io_context;
}

namespace mesh::panel {

inline constexpr std::size_t kAlertQueueMax = 256;
inline constexpr std::uint32_t kAlertAttemptsMax = 20;
inline constexpr DurationMs kAlertBackoffMaxMs = 300'000;

struct AlertSenderSettings {
  std::string node;                   // this node's id, in every message
  std::optional<HttpUrl> webhook;
  std::string webhook_secret_file;    // its first line is the HMAC key
  std::optional<HttpUrl> telegram_api;
  std::string telegram_token_file;    // its first line is the bot token
  std::string telegram_chat_id;
  std::string status_page_url;
  DurationMs timeout_ms = 10'000;
};

// The webhook's body: one JSON object per alert (docs/PANELS.md, "Webhook").
std::string webhook_body(const rotation::Alert& alert, const std::string& node, const std::string& status_page_url);
// hex(HMAC-SHA256(key, body)): the X-Meshnode-Signature header.
std::string webhook_signature(const std::string& key, const std::string& body);
// The Telegram message's text.
std::string telegram_text(const rotation::Alert& alert, const std::string& status_page_url);

class AlertSender {
 public:
  AlertSender(boost::asio::io_context& io, AlertSenderSettings settings, LogSink log);
  ~AlertSender();
  // On the worker's thread.
  void enqueue(const std::vector<rotation::Alert>& alerts);
  const AlertStatus& status() const;

 private:
  class Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace mesh::panel

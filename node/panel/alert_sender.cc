#include "node/panel/alert_sender.h"

#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>
#include <sodium.h>

#include <chrono>
#include <deque>

#include <nlohmann/json.hpp>

#include "common/regular_file.h"
#include "node/panel/http_client.h"

namespace mesh::panel {
namespace {

using Json = nlohmann::json;

// The first line of a secret file, without its line end.
std::optional<std::string> first_line(const std::string& path) {
  auto text = read_regular_file(path, 4096);
  if (!text) return std::nullopt;
  std::string line = text->substr(0, text->find('\n'));
  while (!line.empty() && (line.back() == '\r' || line.back() == ' ')) line.pop_back();
  if (line.empty()) return std::nullopt;
  return line;
}

std::string link(const rotation::Alert& alert, const std::string& status_page_url) {
  return status_page_url.empty() ? "" : status_page_url + "#" + alert.server;
}

}  // namespace

std::string webhook_body(const rotation::Alert& alert, const std::string& node, const std::string& status_page_url) {
  return Json{{"event", rotation::to_string(alert.kind)},
              {"server", alert.server},
              {"country", alert.country},
              {"routes", alert.routes},
              {"from", alert.from},
              {"to", alert.to},
              {"caption", alert.caption},
              {"witnesses", alert.by_country},
              {"in_rotation", alert.in_rotation},
              {"at_ms", alert.at_ms},
              {"node", node},
              {"status_page", link(alert, status_page_url)}}
      .dump(-1, ' ', false, Json::error_handler_t::replace);
}

std::string webhook_signature(const std::string& key, const std::string& body) {
  unsigned char mac[crypto_auth_hmacsha256_BYTES];
  crypto_auth_hmacsha256_state state;
  crypto_auth_hmacsha256_init(&state, reinterpret_cast<const unsigned char*>(key.data()), key.size());
  crypto_auth_hmacsha256_update(&state, reinterpret_cast<const unsigned char*>(body.data()), body.size());
  crypto_auth_hmacsha256_final(&state, mac);
  static const char* kHex = "0123456789abcdef";
  std::string out;
  for (unsigned char b : mac) {
    out += kHex[b >> 4];
    out += kHex[b & 0xf];
  }
  return out;
}

std::string telegram_text(const rotation::Alert& alert, const std::string& status_page_url) {
  std::string routes;
  for (const auto& r : alert.routes) routes += (routes.empty() ? "" : ", ") + r;
  const char* mark = alert.kind == rotation::Alert::Kind::flapping ? "\u26a0\ufe0f"
                     : alert.in_rotation                          ? "\U0001f7e2"
                                                                  : "\U0001f534";
  std::string text = std::string(mark) + " " + alert.server + " (" + alert.country +
                     (routes.empty() ? "" : "; routes " + routes) + "): " + alert.caption;
  if (!alert.by_country.empty()) text += " [" + alert.by_country + "]";
  text += "\n" + alert.from + " \u2192 " + alert.to + ", " + (alert.in_rotation ? "in rotation" : "out of rotation");
  if (!status_page_url.empty()) text += "\n" + link(alert, status_page_url);
  return text;
}

class AlertSender::Impl {
 public:
  Impl(boost::asio::io_context& io, AlertSenderSettings settings, LogSink log)
      : io_(io), settings_(std::move(settings)), log_(std::move(log)),
        webhook_{"webhook", {}, false, 0, boost::asio::steady_timer(io)},
        telegram_{"telegram", {}, false, 0, boost::asio::steady_timer(io)} {
    status_.enabled = settings_.webhook || settings_.telegram_api;
  }

  void enqueue(const std::vector<rotation::Alert>& alerts) {
    for (Channel* channel : channels()) {
      for (const auto& alert : alerts) {
        channel->queue.push_back(alert);
        if (channel->queue.size() > kAlertQueueMax) {
          channel->queue.pop_front();
          ++status_.dropped_total;
        }
      }
      pump(*channel);
    }
    update_queued();
  }

  const AlertStatus& status() const { return status_; }

 private:
  struct Channel {
    const char* name;
    std::deque<rotation::Alert> queue;
    bool in_flight;
    std::uint32_t attempts;
    boost::asio::steady_timer retry;
  };

  std::vector<Channel*> channels() {
    std::vector<Channel*> out;
    if (settings_.webhook) out.push_back(&webhook_);
    if (settings_.telegram_api && !settings_.telegram_token_file.empty()) out.push_back(&telegram_);
    return out;
  }

  void update_queued() {
    status_.queued = static_cast<std::uint32_t>(std::max(webhook_.queue.size(), telegram_.queue.size()));
  }

  void pump(Channel& channel) {
    if (channel.in_flight || channel.queue.empty()) return;
    auto request = build(channel, channel.queue.front());
    if (!request) return done(channel, request.message());
    channel.in_flight = true;
    const HttpUrl& url = &channel == &webhook_ ? *settings_.webhook : *settings_.telegram_api;
    send_http(io_, url, std::move(request.value()), settings_.timeout_ms, [this, &channel](HttpResult result) {
      channel.in_flight = false;
      if (!result) return done(channel, result.message());
      if (result->status / 100 != 2) return done(channel, "HTTP " + std::to_string(result->status));
      done(channel, "");
    });
  }

  Result<HttpRequest, std::string> build(const Channel& channel, const rotation::Alert& alert) {
    HttpRequest request;
    request.method = "POST";
    request.content_type = "application/json";
    if (&channel == &webhook_) {
      auto key = first_line(settings_.webhook_secret_file);
      if (!key) return make_error(std::string(), "webhook_secret_file '" + settings_.webhook_secret_file + "' is unreadable or empty");
      request.body = webhook_body(alert, settings_.node, settings_.status_page_url);
      request.headers = {{"X-Meshnode-Signature", webhook_signature(*key, request.body)},
                         {"X-Meshnode-Timestamp", std::to_string(alert.at_ms / 1000)},
                         {"X-Meshnode-Event", rotation::to_string(alert.kind)},
                         {"X-Meshnode-Node", settings_.node}};
      return request;
    }
    auto token = first_line(settings_.telegram_token_file);
    if (!token) return make_error(std::string(), "telegram_token_file '" + settings_.telegram_token_file + "' is unreadable or empty");
    request.target = "/bot" + *token + "/sendMessage";
    request.body = Json{{"chat_id", settings_.telegram_chat_id},
                        {"text", telegram_text(alert, settings_.status_page_url)},
                        {"disable_web_page_preview", true}}
                       .dump(-1, ' ', false, Json::error_handler_t::replace);
    return request;
  }

  // One attempt ended: `error` empty when delivered.
  void done(Channel& channel, const std::string& error) {
    const bool webhook = &channel == &webhook_;
    if (error.empty()) {
      ++(webhook ? status_.webhook_sent_total : status_.telegram_sent_total);
      channel.queue.pop_front();
      channel.attempts = 0;
      update_queued();
      return pump(channel);
    }
    ++(webhook ? status_.webhook_failed_total : status_.telegram_failed_total);
    if (++channel.attempts >= kAlertAttemptsMax) {
      log_(Severity::error, "alert", std::string(channel.name) + ": alert on " + channel.queue.front().server +
                                         " dropped after " + std::to_string(channel.attempts) + " attempts: " + error,
           {{"channel", channel.name}});
      ++status_.dropped_total;
      channel.queue.pop_front();
      channel.attempts = 0;
      update_queued();
      return pump(channel);
    }
    const DurationMs backoff = std::min<DurationMs>(kAlertBackoffMaxMs, 1'000LL << std::min<std::uint32_t>(channel.attempts - 1, 9));
    if (channel.attempts == 1) {
      log_(Severity::warn, "alert", std::string(channel.name) + ": alert not delivered (" + error + "); retrying with backoff",
           {{"channel", channel.name}});
    }
    channel.in_flight = true;  // until the retry
    channel.retry.expires_after(std::chrono::milliseconds(backoff));
    channel.retry.async_wait([this, &channel](const boost::system::error_code& e) {
      channel.in_flight = false;
      if (!e) pump(channel);
    });
  }

  boost::asio::io_context& io_;
  AlertSenderSettings settings_;
  LogSink log_;
  Channel webhook_, telegram_;
  AlertStatus status_;
};

AlertSender::AlertSender(boost::asio::io_context& io, AlertSenderSettings settings, LogSink log)
    : impl_(std::make_unique<Impl>(io, std::move(settings), std::move(log))) {}
AlertSender::~AlertSender() = default;
void AlertSender::enqueue(const std::vector<rotation::Alert>& alerts) { impl_->enqueue(alerts); }
const AlertStatus& AlertSender::status() const { return impl_->status(); }

}  // namespace mesh::panel

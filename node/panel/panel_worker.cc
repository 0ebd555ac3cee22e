#include "node/panel/panel_worker.h"

#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>

#include <chrono>
#include <mutex>
#include <thread>

#include "node/panel/alert_sender.h"

namespace mesh::panel {
namespace {

UnixMs system_now() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch())
      .count();
}

}  // namespace

class PanelWorker::Impl {
 public:
  Impl(const node::NodeConfig& config, LogSink log) : log_(std::move(log)) {
    const node::PanelConfig& p = config.panel;
    if (p.kind != node::PanelKind::none) {
      PanelClientSettings client{config.node_id, *parse_http_url(p.url), p.credentials_file, p.timeout_ms};
      auto made = p.kind == node::PanelKind::remnawave ? make_remnawave_client(io_, client)
                                                       : make_marzban_client(io_, client);
      PanelSyncSettings settings{p.dry_run, p.changes_per_minute, p.interval_ms, p.hosts};
      sync_ = std::make_unique<PanelSync>(std::move(made), settings, log_, system_now);
      sync_status_ = sync_->status();
    }
    const node::AlertsConfig& a = config.alerts;
    if (a.enabled()) {
      AlertSenderSettings settings;
      settings.node = config.node_id;
      if (!a.webhook_url.empty()) settings.webhook = *parse_http_url(a.webhook_url);
      settings.webhook_secret_file = a.webhook_secret_file;
      if (!a.telegram_token_file.empty()) settings.telegram_api = *parse_http_url(a.telegram_api);
      settings.telegram_token_file = a.telegram_token_file;
      settings.telegram_chat_id = a.telegram_chat_id;
      settings.status_page_url = a.status_page_url;
      settings.timeout_ms = a.timeout_ms;
      alerts_ = std::make_unique<AlertSender>(io_, settings, log_);
      alert_status_ = alerts_->status();
    }
  }

  ~Impl() { stop(); }

  bool panel_on() const { return sync_ != nullptr; }
  bool alerts_on() const { return alerts_ != nullptr; }

  void start() {
    if (!sync_ && !alerts_) return;
    thread_ = std::thread([this] { io_.run(); });
  }

  void stop() {
    if (!thread_.joinable()) return;
    work_.reset();
    io_.stop();
    thread_.join();
  }

  void offer_sync(SyncInput input) {
    if (!sync_) return;
    boost::asio::post(io_, [this, input = std::move(input)]() mutable {
      sync_->offer(std::move(input));
      publish();
    });
  }

  void deliver(std::vector<rotation::Alert> alerts) {
    if (!alerts_ || alerts.empty()) return;
    boost::asio::post(io_, [this, alerts = std::move(alerts)] {
      alerts_->enqueue(alerts);
      publish();
    });
  }

  SyncStatus sync_status() const {
    std::lock_guard lock(mutex_);
    return sync_status_;
  }
  AlertStatus alert_status() const {
    std::lock_guard lock(mutex_);
    return alert_status_;
  }

 private:
  // On the worker's thread: the status the daemon reads (offers come every
  // tick, so it is at most a tick old).
  void publish() {
    std::lock_guard lock(mutex_);
    if (sync_) sync_status_ = sync_->status();
    if (alerts_) alert_status_ = alerts_->status();
  }

  LogSink log_;
  boost::asio::io_context io_{1};
  boost::asio::executor_work_guard<boost::asio::io_context::executor_type> work_{io_.get_executor()};
  std::unique_ptr<PanelSync> sync_;
  std::unique_ptr<AlertSender> alerts_;
  std::thread thread_;
  mutable std::mutex mutex_;
  SyncStatus sync_status_;
  AlertStatus alert_status_;
};

PanelWorker::PanelWorker(const node::NodeConfig& config, LogSink log)
    : impl_(std::make_unique<Impl>(config, std::move(log))) {}
PanelWorker::~PanelWorker() = default;
bool PanelWorker::panel_on() const { return impl_->panel_on(); }
bool PanelWorker::alerts_on() const { return impl_->alerts_on(); }
void PanelWorker::start() { impl_->start(); }
void PanelWorker::stop() { impl_->stop(); }
void PanelWorker::offer_sync(SyncInput input) { impl_->offer_sync(std::move(input)); }
void PanelWorker::deliver(std::vector<rotation::Alert> alerts) { impl_->deliver(std::move(alerts)); }
SyncStatus PanelWorker::sync_status() const { return impl_->sync_status(); }
AlertStatus PanelWorker::alert_status() const { return impl_->alert_status(); }

}  // namespace mesh::panel

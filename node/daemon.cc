// The daemon: start-up, the tick, signals, shutdown.
#include "node/daemon.h"

#include <boost/asio/post.hpp>
#include <malloc.h>
#include <sodium.h>

#include <csignal>

#include <filesystem>

#include "node/daemon_impl.h"
#include "node/data_dir_check.h"
#include "node/log.h"

namespace mesh::node {
namespace {

TransportSettings transport_settings(const ServerId& self, const GossipConfig& gossip) {
  TransportSettings settings;
  settings.self = self;
  settings.listen = gossip.listen;
  settings.source_address = gossip.source_address;
  settings.connect_timeout_ms = gossip.connect_timeout_ms;
  settings.idle_timeout_ms = gossip.idle_timeout_ms;
  settings.queue_bytes_max = gossip.queue_bytes_max;
  settings.backoff_min_ms = gossip.backoff_min_ms;
  settings.backoff_max_ms = gossip.backoff_max_ms;
  return settings;
}

ProbeSettings probe_settings(const ProbeConfig& probe) {
  ProbeSettings settings;
  settings.connect_timeout_ms = probe.connect_timeout_ms;
  settings.tls_timeout_ms = probe.tls_timeout_ms;
  settings.source_address = probe.source_address;
  settings.concurrent_max = probe.concurrent_max;
  return settings;
}

std::uint64_t os_random_seed() {
  std::uint64_t seed = 0;
  randombytes_buf(&seed, sizeof seed);
  return seed;
}

}  // namespace

Daemon::Daemon(NodeConfig config, std::string config_path)
    : config_(std::move(config)),
      config_path_(std::move(config_path)),
      strand_(boost::asio::make_strand(io_)),
      tick_timer_(strand_),
      signals_(strand_, SIGINT, SIGTERM, SIGHUP) {}

Daemon::~Daemon() { join_api(); }

void Daemon::join_api() {
  if (api_threads_.empty()) return;
  for (auto& io : api_ios_) io->stop();  // whatever is left of closing connections
  for (auto& thread : api_threads_) thread.join();
  api_threads_.clear();
}

UnixMs Daemon::wall_now() const {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

// Key, ports, API, roster, then store and agent. An error here is the
// operator's to fix; its message says what and where. Everything that can
// refuse a start without touching the data dir comes first (the key, both
// ports, the API's tokens, OpenSSL and certificate, the roster a first
// start needs): the store is opened, and a boot counter taken, only once
// they all hold, so a start that fails leaves the data dir as it was.
// Neither port is served before the agent has started: gossip frames wait
// for io_.run(), the API's threads for serve_api().
Status<StartError> Daemon::open() {
  if (sodium_init() < 0) return make_error(StartError::cannot_start, "libsodium failed to initialise");
  auto key = load_secret_key_file(config_.key_file);
  if (!key) return make_error(StartError::cannot_start, "key file '" + config_.key_file + "': " + key.message());
  node_key_ = key->public_key();
  transport_ = std::make_unique<Transport>(
      io_, [this](std::function<void()> task) { boost::asio::post(strand_, std::move(task)); },
      transport_settings(config_.node_id, config_.gossip), os_random_seed(),
      TransportCallbacks{
          .on_frame = [this](Bytes frame, InboundId inbound) { on_frame(frame, inbound); },
          .on_path_failed = [this](const ServerId& peer) {
            if (!stopping_) agent_->on_link_failed(peer, wall_now());
          },
          .on_path_up = [this](const ServerId& peer) {
            if (!stopping_) agent_->on_link_up(peer, wall_now());
          }});
  auto listening = transport_->start();
  if (!listening) return make_error(StartError::cannot_start, "[gossip] listen: " + listening.message());
  gossip_bound_ = listening.value();
  prober_ = std::make_unique<Prober>(io_, probe_settings(config_.probe));
  if (auto api = open_api(); !api) return api.error();
  return open_store(key.value());
}

// The store and the agent. A data dir without a store gets one only when
// the roster file can start the node; one with a store is read before
// anything is written to it (its roster may be the one to start from).
Status<StartError> Daemon::open_store(const SecretKey& key) {
  const bool fresh = !std::filesystem::exists(std::filesystem::path(config_.data_dir) / "data.mdb");
  if (fresh) {
    if (auto roster = check_start_roster(std::nullopt); !roster) return roster.error();
  }
  if (auto access = check_data_dir(config_.data_dir); !access) {
    return make_error(StartError::cannot_start, access.message());
  }
  auto store = LmdbAgentStore::open(config_.data_dir, config_.node_id, node_key_);
  if (!store) return make_error(StartError::cannot_start, explain_storage_error(config_.data_dir, store.message()));
  store_ = std::move(store.value());
  auto stored = store_->load();
  if (!stored) return make_error(StartError::cannot_start, "data dir: " + store_->last_error());
  if (!fresh) {
    if (auto roster = check_start_roster(stored_roster(stored.value())); !roster) return roster.error();
  }
  // Never below the seconds since 2026-01-01 (docs/STORAGE.md, "Boot
  // counter"): a node whose data dir was lost restarts with its key and
  // must not reuse its nonces.
  constexpr UnixMs kBootFloorEpochMs = 1'767'225'600'000;  // 2026-01-01T00:00:00Z
  const UnixMs since_epoch_ms = std::max<UnixMs>(wall_now() - kBootFloorEpochMs, 0);
  auto boot = store_->next_boot_counter(static_cast<std::uint64_t>(since_epoch_ms / 1'000));
  if (!boot) return make_error(StartError::cannot_start, explain_storage_error(config_.data_dir, boot.message()));
  agent::AgentConfig agent_config;
  agent_config.core.self = config_.node_id;
  agent_config.core.node_key = key;
  agent_config.core.operator_key = config_.operator_key;
  agent_config.core.boot_counter = boot.value();
  agent_config.tls_every = config_.probe.tls_every;
  agent_config.probes_in_flight_max = config_.probe.concurrent_max;
  agent_config.volume_cap_bytes_per_day = config_.volume.cap_bytes_per_day;
  agent_ = std::make_unique<agent::Agent>(agent_config, os_random_seed());
  auto started = agent_->start(stored.value(), wall_now());
  if (!started) {
    return make_error(StartError::cannot_start, "data dir '" + config_.data_dir + "': " + started.message());
  }
  started_ms_ = wall_now();
  log_event(LogLevel::info, "start",
            "node " + config_.node_id + " started: boot " + std::to_string(boot.value()) + ", " +
                std::to_string(stored->records.size()) + " records from " + config_.data_dir +
                ", gossip on " + format_endpoint(gossip_bound_),
            {{"node", config_.node_id}, {"boot", boot.value()},
             {"records", stored->records.size()},
             {"gossip_listen", format_endpoint(gossip_bound_)}});
  apply(std::move(started.value()));
  return Ok{};
}

// The panel API (docs/API.md), when [api] listen is set: its tokens, its
// certificate (and OpenSSL), its address, bound but not yet served. Any of
// them wrong stops the start-up.
Status<StartError> Daemon::open_api() {
  if (!config_.api.listen) return Ok{};
  auto tokens = api::TokenSet::load(config_.api.token_file);
  if (!tokens) {
    return make_error(StartError::cannot_start,
                      "[api] token_file: " + tokens.message() +
                          " (make one with `meshctl token new`, or set [api] listen = \"\")");
  }
  if (auto exposed = api::token_file_exposed(config_.api.token_file)) log_event(LogLevel::warn, "api", *exposed);
  api::ApiServerSettings settings{*config_.api.listen, config_.api.tls_cert_file, config_.api.tls_key_file};
  std::vector<boost::asio::io_context*> session_ios;
  for (std::uint32_t i = 0; i < config_.api.threads; ++i) {
    api_ios_.push_back(std::make_unique<boost::asio::io_context>(1));  // one thread runs each
    session_ios.push_back(api_ios_.back().get());
  }
  api_ = std::make_unique<api::ApiServer>(
      *api_ios_.front(), settings, std::make_shared<const api::TokenSet>(std::move(tokens.value())), snapshots_,
      [this](std::string raw, std::function<void(api::ApiResponse)> reply) {
        boost::asio::post(strand_, [this, raw = std::move(raw), reply = std::move(reply)]() mutable {
          offer_roster(std::move(raw), std::move(reply));
        });
      },
      session_ios);
  auto bound = api_->start();
  if (!bound) return make_error(StartError::cannot_start, bound.message());
  api_bound_ = bound.value();
  return Ok{};
}

// The API's threads start once the agent has started and its first
// snapshot is published: no request ever finds no snapshot.
void Daemon::serve_api() {
  if (!api_) return;
  publish_snapshot();
  for (auto& io : api_ios_) {
    api_work_.push_back(boost::asio::make_work_guard(*io));
    api_threads_.emplace_back([&io = *io] { io.run(); });
  }
  const bool clear = !api_->tls() && !is_loopback_host(config_.api.listen->host);
  log_event(clear ? LogLevel::warn : LogLevel::info, "api",
            std::string("panel API on ") + (api_->tls() ? "https://" : "http://") + format_endpoint(api_bound_) +
                (clear ? " in clear text (insecure_plaintext): bearer tokens cross the network readable" : ""),
            {{"listen", format_endpoint(api_bound_)}, {"tls", api_->tls()}});
}

void Daemon::schedule_tick() {
  const auto interval = std::chrono::milliseconds(agent::AgentConfig{}.core.tick_interval_ms);
  const auto now = std::chrono::steady_clock::now();
  next_tick_ += interval;
  if (next_tick_ < now) next_tick_ = now + interval;  // fell behind: no burst
  tick_timer_.expires_at(next_tick_);
  tick_timer_.async_wait([this](const boost::system::error_code& error) {
    if (error || stopping_) return;
    on_tick();
  });
}

void Daemon::on_tick() {
  check_clock();
  apply(agent_->on_tick(wall_now()));
  log_clock();
  log_problems();
  end_start(wall_now());
  if (!stopping_) drive_panel();
  if (api_ && !stopping_) {
    publish_snapshot();
    // One line when the API starts shedding connections under a flood, one
    // when it has stopped (docs/API.md, "Under a connection flood").
    if (auto note = api_->shedding_change(wall_now())) {
      log_event(note->started ? LogLevel::warn : LogLevel::info, "api", note->message,
                {{"shed", std::to_string(note->shed)}});
    }
  }
  // The same for the gossip port (docs/PROTOCOL.md §2a, "Who may hold a
  // connection").
  if (auto line = transport_->shedding_change(wall_now())) {
    log_event(line->started ? LogLevel::warn : LogLevel::info, "gossip", line->message);
  }
  if (wall_now() >= next_status_log_ms_) {
    next_status_log_ms_ = wall_now() + kStatusLogIntervalMs;
    log_status();
  }
  trim_heap();
  if (!stopping_) schedule_tick();
}

// The daemon allocates in bursts (a SYNC list, a roster, the API's
// snapshot, a start-up), and glibc keeps the pages they freed resident for
// the next burst. Once a minute malloc_trim(0) hands the whole free pages
// of every arena back to the kernel, so the resident heap is what the
// daemon holds: in `make demo` 0.2 instead of 1.1 MiB (README, "Beside
// Serf"). A page used again costs a fault, a few per minute.
void Daemon::trim_heap() {
  const auto now = std::chrono::steady_clock::now();
  if (now < next_heap_trim_) return;
  next_heap_trim_ = now + std::chrono::milliseconds(kHeapTrimIntervalMs);
  ::malloc_trim(0);
}

// One line when the fleet's reports start or stop saying this node's clock
// is off (docs/VERDICTS.md, "A skewed clock").
void Daemon::log_clock() {
  const agent::ClockState clock = agent_->clock(wall_now());
  if (clock == clock_state_) return;
  const bool was = clock_state_.suspect != agent::ClockSuspect::none;
  clock_state_ = clock;
  const std::string seconds = std::to_string(clock.offset_ms / 1000);
  switch (clock.suspect) {
    case agent::ClockSuspect::ahead:
      log_event(LogLevel::warn, "clock",
                "this node's clock seems " + seconds +
                    " s ahead of the fleet's (every report arrives already old); verdicts are "
                    "evaluated at the fleet's time, and the fleet refuses this node's reports "
                    "until the clock is fixed",
                {{"suspect", "ahead"}, {"offset_ms", clock.offset_ms}});
      break;
    case agent::ClockSuspect::behind:
      log_event(LogLevel::warn, "clock",
                "this node's clock seems more than " + seconds +
                    " s behind the fleet's (the fleet's reports are refused as dated in the "
                    "future); fix the clock",
                {{"suspect", "behind"}, {"offset_ms", clock.offset_ms}});
      break;
    case agent::ClockSuspect::none:
      if (was) log_event(LogLevel::info, "clock", "this node's clock agrees with the fleet's again");
      break;
  }
}

// The wall clock against the monotonic one: a step (NTP, an operator) moves
// the probe times the agent holds with it.
void Daemon::check_clock() {
  const auto mono = std::chrono::steady_clock::now();
  const UnixMs wall = wall_now();
  const auto elapsed = std::chrono::duration_cast<std::chrono::milliseconds>(mono - last_mono_).count();
  const DurationMs jump = wall - (last_wall_ + elapsed);
  last_mono_ = mono;
  last_wall_ = wall;
  if (jump > kClockJumpMs || jump < -kClockJumpMs) {
    agent_->on_clock_jump(jump);
    log_event(LogLevel::warn, "clock_jump",
              "the wall clock jumped by " + std::to_string(jump) + " ms; probe times moved with it",
              {{"delta_ms", jump}});
  }
}

void Daemon::wait_signals() {
  signals_.async_wait([this](const boost::system::error_code& error, int signal) {
    if (error) return;
    on_signal(signal);
    if (!stopping_) wait_signals();
  });
}

void Daemon::on_signal(int signal) {
  if (signal == SIGHUP) {
    reload();
    return;
  }
  log_event(LogLevel::info, "stop", std::string("stopping on ") + (signal == SIGTERM ? "SIGTERM" : "SIGINT"));
  shutdown(kExitOk, true);
}

// SIGHUP: the roster file and the log level, re-read.
void Daemon::reload() {
  auto reread = load_node_config(config_path_);
  if (reread) {
    config_.log.level = reread->log.level;
    set_log_level(config_.log.level);
    if (api_) {
      auto tokens = api::TokenSet::load(config_.api.token_file);
      if (tokens) {
        if (auto exposed = api::token_file_exposed(config_.api.token_file)) log_event(LogLevel::warn, "api", *exposed);
        api_->set_tokens(std::make_shared<const api::TokenSet>(std::move(tokens.value())));
      } else {
        log_event(LogLevel::error, "reload", "API tokens not re-read, the old ones stay: " + tokens.message());
      }
    }
  } else {
    log_event(LogLevel::error, "reload", "config not re-read: " + reread.message());
  }
  log_event(LogLevel::info, "reload", "SIGHUP: roster file, log level and API tokens re-read",
            {{"log_level", to_string(config_.log.level)}});
  offer_roster_file();
}

// Stop everything that brings new work (listener and links, timers,
// probes in flight, a self-check's child process), store what the agent
// holds, close LMDB, then leave the loop once the handlers already queued
// have run. Every step is bounded, so meshnode exits within kShutdownMs.
void Daemon::shutdown(int exit_code, bool flush) {
  if (stopping_) return;
  stopping_ = true;
  exit_code_ = exit_code;
  tick_timer_.cancel();
  signals_.cancel();
  if (api_) {
    api_->stop();
    api_work_.clear();  // their threads leave once the connections are closed
  }
  transport_->stop();
  prober_->cancel_all();
  if (panel_) panel_->stop();  // a request in flight is abandoned
  if (flush) {
    auto flushed = agent_->flush(wall_now());
    if (!store_->apply(flushed.store)) {
      log_event(LogLevel::error, "storage", "final flush failed: " + store_->last_error());
      exit_code_ = kExitFailure;
    }
  }
  store_.reset();  // LMDB closed: nothing is written after this point
  if (self_checker_) self_checker_->shutdown();
  // Handlers already queued (sockets closing, probes cancelled) run first.
  boost::asio::post(strand_, [this] { io_.stop(); });
}

// The roster file is offered and a first tick evaluates the verdicts
// before the API serves: its first answer holds the roster and a verdict
// for every server (no_data for those not heard from yet), never a 503
// for want of them.
int Daemon::run() {
  auto opened = open();
  if (!opened) {
    // Once, on stderr, in the log's format (the log is stderr).
    log_event(LogLevel::error, "start", opened.message());
    return opened.code() == StartError::bad_config ? kExitUsage : kExitFailure;
  }
  last_mono_ = std::chrono::steady_clock::now();
  last_wall_ = wall_now();
  offer_roster_file();
  if (agent_->roster() == nullptr) {
    // The roster file passed the start's checks but the agent refused it
    // (dated in the future, say): nothing to run with.
    log_event(LogLevel::error, "start", "no roster to start from: the roster file was refused");
    shutdown(kExitUsage, true);
    io_.run();
    return exit_code_;
  }
  apply(agent_->on_tick(wall_now()));
  serve_api();
  open_panel();
  wait_signals();
  next_tick_ = std::chrono::steady_clock::now();
  schedule_tick();
  io_.run();
  join_api();
  return exit_code_;
}

int run_daemon(const NodeConfig& config, const std::string& config_path) {
  set_log_format(config.log.format);
  set_log_level(config.log.level);
  Daemon daemon(config, config_path);
  return daemon.run();
}

}  // namespace mesh::node

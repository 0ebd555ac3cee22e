#include "node/self_check.h"

#include <atomic>
#include <optional>
#include <utility>

#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/strand.hpp>
#include <boost/asio/thread_pool.hpp>

#include "node/metrics.h"
#include "node/reason_text.h"

namespace mesh::node {
namespace {

using Strand = boost::asio::strand<boost::asio::io_context::executor_type>;
constexpr std::size_t kWorkerThreads = 1;  // blocking checks, one at a time

// "127.0.0.1:443", "[::1]:443".
std::string describe(const Endpoint& endpoint) {
  const bool v6 = endpoint.host.find(':') != std::string::npos;
  return (v6 ? "[" + endpoint.host + "]" : endpoint.host) + ":" + std::to_string(endpoint.port);
}

ProbeSettings listener_probe_settings(const SelfCheckSettings& settings) {
  ProbeSettings probe;
  probe.connect_timeout_ms = settings.listener_timeout_ms;
  probe.tls_timeout_ms = settings.listener_timeout_ms;
  probe.concurrent_max = 1;
  return probe;
}

// One run's parts as they arrive; touched on the checker's strand only.
struct RunState {
  SelfCheckDone done;
  std::string listener_label;
  std::optional<ProbeFailure> listener;  // set when the probe is back (or skipped)
  std::optional<ServiceStatus> service;  // set when the worker is back
  Metrics metrics;

  void finish_if_complete() {
    if (!listener || !service) return;
    agent::SelfCheckOutcome outcome;
    outcome.metrics = metrics;
    std::string reason;
    if (*listener != ProbeFailure::none) {
      outcome.self_check.listener_ok = false;
      reason = "listener " + listener_label + ": " + to_string(*listener);
    }
    if (!service->ok) {
      outcome.self_check.service_ok = false;
      reason += (reason.empty() ? "" : "; ") + service->reason;
    }
    outcome.self_check.reason = truncate_utf8(reason, kSelfCheckReasonBytesMax);
    auto callback = std::move(done);
    callback(std::move(outcome));
  }
};

}  // namespace

struct SelfChecker::Shared {
  Shared(boost::asio::io_context& io_context, SelfCheckSettings check_settings)
      : io(io_context),
        strand(boost::asio::make_strand(io_context)),
        settings(std::move(check_settings)),
        sampler(settings.proc_root, settings.data_dir,
                settings.listener_port != 0 ? settings.listener_port : settings.listener.port) {}

  boost::asio::io_context& io;
  Strand strand;
  const SelfCheckSettings settings;
  MetricsSampler sampler;  // the worker thread only
  std::atomic<bool> stopped{false};  // shutdown(): kill the running check's child
};

struct SelfChecker::Worker {
  boost::asio::thread_pool pool{kWorkerThreads};
};

SelfChecker::SelfChecker(boost::asio::io_context& io, SelfCheckSettings settings)
    : shared_(std::make_shared<Shared>(io, std::move(settings))),
      worker_(std::make_unique<Worker>()),
      prober_(io, listener_probe_settings(shared_->settings)) {}

// join() without stop(): the queued worker parts still run, so each run's
// `done` is still posted.
SelfChecker::~SelfChecker() { worker_->pool.join(); }

void SelfChecker::shutdown() {
  shared_->stopped = true;
  prober_.cancel_all();
  worker_->pool.stop();
}

void SelfChecker::run(SelfCheckDone done) {
  if (shared_->stopped) return;
  auto state = std::make_shared<RunState>();
  state->done = std::move(done);
  state->listener_label = describe(shared_->settings.listener);
  const SelfCheckSettings& settings = shared_->settings;
  if (settings.listener.port == 0) {
    state->listener = ProbeFailure::none;
  } else {
    agent::ProbeRequest request;
    request.address = settings.listener;
    request.sni = settings.listener_sni;
    request.tls = settings.listener_tls;
    prober_.start(request, [strand = shared_->strand, state](agent::ProbeOutcome outcome) {
      boost::asio::post(strand, [state, failure = outcome.failure] {
        state->listener = failure;
        state->finish_if_complete();
      });
    });
  }
  // The work guard keeps io_context::run() from returning while the
  // worker holds a part whose answer is still to be posted.
  boost::asio::post(worker_->pool, [shared = shared_, state,
                                    guard = boost::asio::make_work_guard(shared_->io)]() mutable {
    ServiceStatus service = check_service(shared->settings.service,
                                          shared->settings.exec_timeout_ms,
                                          shared->settings.proc_root, &shared->stopped);
    const Metrics metrics = shared->sampler.sample();
    boost::asio::post(shared->strand, [state, service = std::move(service), metrics]() mutable {
      state->service = std::move(service);
      state->metrics = metrics;
      state->finish_if_complete();
    });
    guard.reset();
  });
}

}  // namespace mesh::node

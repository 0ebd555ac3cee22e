#include "node/prober.h"

#include <sodium.h>

#include <atomic>
#include <deque>
#include <map>
#include <utility>
#include <vector>

#include <boost/asio/post.hpp>

#include "common/check.h"
#include "node/probe_session.h"

namespace mesh::node {
namespace {

struct PendingProbe {
  agent::ProbeRequest request;
  ProbeDone done;
};

// The outcome of a probe that never reached the network.
agent::ProbeOutcome unstarted_outcome(const agent::ProbeRequest& request) {
  agent::ProbeOutcome outcome;
  outcome.probe_id = request.probe_id;
  outcome.target = request.target;
  outcome.tls = request.tls;
  outcome.failure = ProbeFailure::tcp_timeout;
  return outcome;
}

}  // namespace

// Everything but the counters runs on `strand`.
struct Prober::Impl : std::enable_shared_from_this<Prober::Impl> {
  Impl(boost::asio::io_context& io, ProbeSettings probe_settings)
      : strand(boost::asio::make_strand(io)), settings(std::move(probe_settings)) {}

  void enqueue(agent::ProbeRequest request, ProbeDone done);
  void fill_slots();
  void launch(PendingProbe pending);
  void on_session_done(std::uint64_t serial);
  void cancel_everything();

  ProbeStrand strand;
  const ProbeSettings settings;
  std::deque<PendingProbe> queue;                                 // FIFO, ≤ queued_max
  std::map<std::uint64_t, std::weak_ptr<ProbeSession>> sessions;  // in flight, by serial
  std::uint64_t next_serial = 0;
  std::atomic<std::size_t> active_count{0};
  std::atomic<std::size_t> queued_count{0};
  std::atomic<std::size_t> dropped_count{0};
};

void Prober::Impl::enqueue(agent::ProbeRequest request, ProbeDone done) {
  if (sessions.size() >= settings.concurrent_max && queue.size() >= settings.queued_max) {
    ++dropped_count;
    done(unstarted_outcome(request));
    return;
  }
  queue.push_back(PendingProbe{std::move(request), std::move(done)});
  fill_slots();
}

// Every probe goes through the queue, so that free slots are taken in
// arrival order. A loop, not recursion: a probe that fails at once (a bad
// source address) finishes inside launch() and only posts the next fill.
void Prober::Impl::fill_slots() {
  while (sessions.size() < settings.concurrent_max && !queue.empty()) {
    PendingProbe next = std::move(queue.front());
    queue.pop_front();
    launch(std::move(next));
  }
  queued_count = queue.size();
}

void Prober::Impl::launch(PendingProbe pending) {
  const std::uint64_t serial = next_serial++;
  auto on_done = [self = shared_from_this(), serial,
                  done = std::move(pending.done)](agent::ProbeOutcome outcome) {
    self->on_session_done(serial);
    done(std::move(outcome));
  };
  auto session =
      std::make_shared<ProbeSession>(strand, settings, pending.request, std::move(on_done));
  sessions.emplace(serial, session);
  active_count = sessions.size();
  session->start();
}

void Prober::Impl::on_session_done(std::uint64_t serial) {
  sessions.erase(serial);
  active_count = sessions.size();
  if (!queue.empty()) boost::asio::post(strand, [self = shared_from_this()] { self->fill_slots(); });
}

// The queue is emptied first so that no finishing session's fill launches
// a queued probe; sessions are collected first because each one erases
// itself from `sessions` as it finishes.
void Prober::Impl::cancel_everything() {
  std::deque<PendingProbe> waiting = std::exchange(queue, {});
  queued_count = 0;
  std::vector<std::shared_ptr<ProbeSession>> running;
  for (auto& [serial, weak] : sessions) {
    if (auto session = weak.lock()) running.push_back(std::move(session));
  }
  for (auto& session : running) session->cancel();
  for (auto& pending : waiting) pending.done(unstarted_outcome(pending.request));
}

Prober::Prober(boost::asio::io_context& io, ProbeSettings settings) {
  MESH_CHECK(settings.concurrent_max >= 1, "ProbeSettings::concurrent_max must be >= 1");
  // The ClientHello's random parts come from libsodium (node/probe_session.cc).
  MESH_CHECK(sodium_init() >= 0, "libsodium cannot initialize");
  impl_ = std::make_shared<Impl>(io, std::move(settings));
}

Prober::~Prober() { cancel_all(); }

void Prober::start(const agent::ProbeRequest& request, ProbeDone done) {
  boost::asio::post(impl_->strand, [impl = impl_, request, done = std::move(done)]() mutable {
    impl->enqueue(std::move(request), std::move(done));
  });
}

void Prober::cancel_all() {
  boost::asio::post(impl_->strand, [impl = impl_] { impl->cancel_everything(); });
}

std::size_t Prober::active() const { return impl_->active_count; }
std::size_t Prober::queued() const { return impl_->queued_count; }
std::size_t Prober::dropped() const { return impl_->dropped_count; }

}  // namespace mesh::node

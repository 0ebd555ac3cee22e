#include "node/prober.h"

#include <openssl/ssl.h>

#include <atomic>
#include <deque>
#include <map>
#include <utility>
#include <vector>

#include <boost/asio/post.hpp>
#include <boost/system/system_error.hpp>

#include "common/check.h"
#include "node/probe_session.h"

namespace mesh::node {
namespace {

// ALPN as a browser offers it, in wire format (length-prefixed names).
constexpr unsigned char kAlpnProtocols[] = "\x02h2\x08http/1.1";

// A client context like a user's app, minus certificate verification:
// Reality-style servers present another site's certificate.
boost::asio::ssl::context make_client_context() {
  try {
    boost::asio::ssl::context tls(boost::asio::ssl::context::tls_client);
    SSL_CTX* ctx = tls.native_handle();
    SSL_CTX_set_verify(ctx, SSL_VERIFY_NONE, nullptr);
    MESH_CHECK(SSL_CTX_set_min_proto_version(ctx, TLS1_2_VERSION) == 1, "TLS 1.2 unavailable");
    MESH_CHECK(SSL_CTX_set_max_proto_version(ctx, TLS1_3_VERSION) == 1, "TLS 1.3 unavailable");
    MESH_CHECK(SSL_CTX_set_alpn_protos(ctx, kAlpnProtocols, sizeof(kAlpnProtocols) - 1) == 0,
               "cannot set ALPN");
    return tls;
  } catch (const boost::system::system_error&) {
    MESH_CHECK(false, "OpenSSL cannot create a TLS client context");
  }
}

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
      : strand(boost::asio::make_strand(io)),
        settings(std::move(probe_settings)),
        tls(make_client_context()) {}

  void enqueue(agent::ProbeRequest request, ProbeDone done);
  void fill_slots();
  void launch(PendingProbe pending);
  void on_session_done(std::uint64_t serial);
  void cancel_everything();

  ProbeStrand strand;
  const ProbeSettings settings;
  boost::asio::ssl::context tls;
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
      std::make_shared<ProbeSession>(strand, tls, settings, pending.request, std::move(on_done));
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

// The prober: runs one probe the way a user's VPN app connects
// (docs/PROTOCOL.md, "Probes"): resolve the host, TCP connect (bound to the
// configured source address), then, when asked, a TLS handshake sending the
// server's SNI, then an abortive close (RST). Each stage has its own
// deadline; the outcome carries exactly one failure reason, the stage
// timings and an estimate of the bytes on the wire (node/agent/wire_cost.h).
//
// Asio and OpenSSL stay in the .cc files: this header only forward-declares
// the io_context.
#pragma once

#include <cstddef>
#include <functional>
#include <memory>
#include <string>

#include "common/time.h"
#include "node/agent/config.h"
#include "node/agent/effects.h"

namespace boost::asio {
class io_context;
}

namespace mesh::node {

struct ProbeSettings {
  // Resolution and TCP connect together (node/agent/config.h).
  DurationMs connect_timeout_ms = agent::kDefaultProbeConnectTimeoutMs;
  DurationMs tls_timeout_ms = agent::kDefaultProbeTlsTimeoutMs;  // the TLS handshake, from TCP up
  std::string source_address;          // IP literal to bind to; empty: any
  std::size_t concurrent_max = 32;     // probes in flight at once; the rest wait FIFO
  // Probes waiting for a slot. A request arriving when the queue is full is
  // not run: it completes at once with tcp_timeout, connect_ms -1 and
  // wire_bytes 0 (a probe that cannot even start within its time has, for
  // the agent, timed out), and dropped() counts it.
  std::size_t queued_max = 4096;
};

using ProbeDone = std::function<void(agent::ProbeOutcome)>;

// Thread safety: start() and cancel_all() may be called from any thread;
// the work runs on a private strand of the io_context and `done` is called
// there. Ownership: probes in flight keep the prober's internals alive, so
// destroying the Prober (which cancels everything) is safe at any time.
// REQUIRES: the io_context outlives the Prober.
class Prober {
 public:
  // REQUIRES: settings.concurrent_max >= 1; source_address empty or an IP
  // literal (a bad one makes every probe fail with tcp_unreachable).
  Prober(boost::asio::io_context& io, ProbeSettings settings);
  ~Prober();  // cancel_all()
  Prober(const Prober&) = delete;
  Prober& operator=(const Prober&) = delete;

  // Runs `request` asynchronously; never blocks. `done` is called exactly
  // once, on the prober's strand, never from inside start(): with the
  // outcome, or after cancel_all(), or at once when the queue is full (see
  // ProbeSettings::queued_max), provided the io_context keeps running.
  //
  // Stages and reasons: resolution (DNS name or IP literal; a failure, or
  // the connect deadline expiring during it → tcp_unreachable); connect
  // (deadline → tcp_timeout, refused → tcp_refused, no route →
  // tcp_unreachable; node/probe_failure.h); when request.tls, the TLS
  // stage up to the server's ServerHello (node/tls_hello.h): a ClientHello
  // with SNI request.sni, ALPN "h2","http/1.1", TLS 1.2-1.3 (deadline →
  // tls_timeout, reset/EOF → tls_reset, alert → tls_alert, an answer that
  // is not a ServerHello to that hello → tls_bad_peer). A bare TCP probe
  // that connected is `none` (no data is awaited). This prober never
  // reports tcp_reset: a reset during TLS is tls_reset.
  void start(const agent::ProbeRequest& request, ProbeDone done);

  // Shutdown: every probe in flight or queued completes now (its `done`
  // runs on the strand), as though its current deadline fired:
  // tcp_unreachable while resolving, tcp_timeout while connecting and for
  // queued probes, tls_timeout during TLS. The
  // caller is stopping and should not feed these outcomes to the probe
  // ledger. The prober stays usable; later start() calls run normally.
  void cancel_all();

  // Counters, for logs and tests; read on any thread.
  std::size_t active() const;   // probes in flight
  std::size_t queued() const;   // probes waiting for a slot
  std::size_t dropped() const;  // requests refused since construction (queue full)

  struct Impl;

 private:
  std::shared_ptr<Impl> impl_;
};

}  // namespace mesh::node

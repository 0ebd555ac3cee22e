// The prober's bounds and lifetime on real sockets: at most concurrent_max
// connections at once, a FIFO queue with a bound, cancel_all and
// destruction calling every `done` once; and the error classification
// table (node/probe_failure.h).

#include <doctest/doctest.h>

#include <map>
#include <memory>

#include <boost/asio/error.hpp>
#include <boost/asio/io_context.hpp>

#include "node/probe_failure.h"
#include "node/prober.h"
#include "tests/node/probe_helpers.h"
#include "tests/node/test_servers.h"

namespace mesh::node {
namespace {

using test::Outcomes;
using test::request_to;
using test::ServerMode;
using test::short_timeouts;
using test::TestServer;

TEST_CASE("concurrent_max bounds the connections open at once; the rest wait in order") {
  boost::asio::io_context io;
  TestServer server(io, ServerMode::hold);  // TLS probes time out: each holds a connection
  ProbeSettings settings = short_timeouts();
  settings.tls_timeout_ms = 150;
  settings.concurrent_max = 2;
  Prober prober(io, settings);
  Outcomes outcomes;
  constexpr std::uint64_t kProbes = 6;
  for (std::uint64_t id = 1; id <= kProbes; ++id) {
    prober.start(request_to(server.port(), true, id), outcomes.callback());
  }
  REQUIRE(test::run_until(io, [&] { return prober.active() == 2 && prober.queued() == 4; }));
  REQUIRE(test::run_until(io, [&] { return outcomes.list.size() == kProbes; }));
  io.poll();
  CHECK(outcomes.each_called_once(kProbes));
  CHECK(server.accepted() == kProbes);
  CHECK(server.open_max() == 2);
  for (const auto& outcome : outcomes.list) CHECK(outcome.failure == ProbeFailure::tls_timeout);
  CHECK(prober.active() == 0);
  CHECK(prober.queued() == 0);
}

TEST_CASE("queued probes start first in, first out") {
  boost::asio::io_context io;
  TestServer server(io, ServerMode::hold);
  ProbeSettings settings = short_timeouts();
  settings.tls_timeout_ms = 50;
  settings.concurrent_max = 1;
  Prober prober(io, settings);
  Outcomes outcomes;
  for (std::uint64_t id = 1; id <= 4; ++id) {
    prober.start(request_to(server.port(), true, id), outcomes.callback());
  }
  REQUIRE(test::run_until(io, [&] { return outcomes.list.size() == 4; }));
  for (std::uint64_t i = 0; i < 4; ++i) CHECK(outcomes.list[i].probe_id == i + 1);
}

TEST_CASE("a request over the queue bound completes at once as tcp_timeout and is counted") {
  boost::asio::io_context io;
  TestServer server(io, ServerMode::hold);
  ProbeSettings settings = short_timeouts();
  settings.tls_timeout_ms = 100;
  settings.concurrent_max = 1;
  settings.queued_max = 1;
  Prober prober(io, settings);
  Outcomes outcomes;
  for (std::uint64_t id = 1; id <= 3; ++id) {
    prober.start(request_to(server.port(), true, id), outcomes.callback());
  }
  REQUIRE(test::run_until(io, [&] { return outcomes.list.size() == 3; }));
  CHECK(outcomes.each_called_once(3));
  CHECK(outcomes.list.front().probe_id == 3);  // refused before the others ended
  CHECK(outcomes.list.front().failure == ProbeFailure::tcp_timeout);
  CHECK(outcomes.list.front().wire_bytes == 0);
  CHECK(prober.dropped() == 1);
}

TEST_CASE("cancel_all calls every done once, in flight and queued; the prober stays usable") {
  boost::asio::io_context io;
  TestServer server(io, ServerMode::hold);
  ProbeSettings settings;  // the 10 s defaults: only cancellation ends these probes
  settings.concurrent_max = 2;
  Prober prober(io, settings);
  Outcomes outcomes;
  for (std::uint64_t id = 1; id <= 5; ++id) {
    prober.start(request_to(server.port(), true, id), outcomes.callback());
  }
  // Both running probes are in their handshake once their ClientHellos arrived.
  REQUIRE(test::run_until(io, [&] { return server.talked() == 2 && prober.queued() == 3; }));
  prober.cancel_all();
  REQUIRE(test::run_until(io, [&] { return outcomes.list.size() == 5; }));
  io.poll();
  CHECK(outcomes.each_called_once(5));
  for (const auto& outcome : outcomes.list) {
    const bool was_running = outcome.probe_id <= 2;
    CHECK(outcome.failure ==
          (was_running ? ProbeFailure::tls_timeout : ProbeFailure::tcp_timeout));
    CHECK((outcome.connect_ms >= 0) == was_running);
  }
  CHECK(prober.active() == 0);
  CHECK(prober.queued() == 0);

  prober.start(request_to(server.port(), false, 6), outcomes.callback());
  REQUIRE(test::run_until(io, [&] { return outcomes.list.size() == 6; }));
  CHECK(outcomes.list.back().failure == ProbeFailure::none);
}

TEST_CASE("destroying the prober with probes in flight still calls every done once") {
  boost::asio::io_context io;
  TestServer server(io, ServerMode::hold);
  auto prober = std::make_unique<Prober>(io, ProbeSettings{});
  Outcomes outcomes;
  prober->start(request_to(server.port(), true, 1), outcomes.callback());
  prober->start(request_to(server.port(), true, 2), outcomes.callback());
  REQUIRE(test::run_until(io, [&] { return server.accepted() == 2; }));
  prober.reset();
  REQUIRE(test::run_until(io, [&] { return outcomes.list.size() == 2; }));
  io.poll();
  CHECK(outcomes.each_called_once(2));
}

TEST_CASE("TLS probes cost more on the wire than TCP probes; both cost something") {
  boost::asio::io_context io;
  TestServer server(io, ServerMode::tls);
  Prober prober(io, short_timeouts());
  Outcomes outcomes;
  prober.start(request_to(server.port(), false, 1), outcomes.callback());
  prober.start(request_to(server.port(), true, 2), outcomes.callback());
  REQUIRE(test::run_until(io, [&] { return outcomes.list.size() == 2; }));
  std::map<std::uint64_t, agent::ProbeOutcome> by_id;
  for (const auto& outcome : outcomes.list) by_id[outcome.probe_id] = outcome;
  const auto& tcp = by_id[1];
  const auto& tls = by_id[2];
  CHECK(tcp.failure == ProbeFailure::none);
  CHECK(tls.failure == ProbeFailure::none);
  CHECK(tcp.wire_bytes > 0);
  CHECK(tls.wire_bytes > tcp.wire_bytes);
}

TEST_CASE("socket errors map to exactly one failure reason") {
  namespace err = boost::asio::error;
  CHECK(classify_connect_error(err::connection_refused) == ProbeFailure::tcp_refused);
  CHECK(classify_connect_error(err::timed_out) == ProbeFailure::tcp_timeout);
  CHECK(classify_connect_error(err::network_unreachable) == ProbeFailure::tcp_unreachable);
  CHECK(classify_connect_error(err::host_unreachable) == ProbeFailure::tcp_unreachable);
  const auto not_available = make_error_code(boost::system::errc::address_not_available);
  CHECK(classify_connect_error(not_available) == ProbeFailure::tcp_unreachable);
  CHECK(classify_connect_error(err::host_not_found) == ProbeFailure::tcp_unreachable);

  // In the TLS stage every socket error is a lost connection: alerts and
  // answers that are not TLS come from the bytes (tls_hello_test.cc).
  CHECK(classify_handshake_error(err::connection_reset) == ProbeFailure::tls_reset);
  CHECK(classify_handshake_error(err::eof) == ProbeFailure::tls_reset);
  CHECK(classify_handshake_error(err::broken_pipe) == ProbeFailure::tls_reset);
}

}  // namespace
}  // namespace mesh::node

// The panel client's HTTP(S) (node/panel/http_client.h): every way a panel,
// a webhook or Telegram can fail to answer ends in a clear error within the
// request's deadline, against real servers on loopback (tests/node/
// test_servers.h): HTTPS to a certificate no CA vouches for, a server that
// accepts and never answers, one whose accept queue is full, a closed port.
// And the URLs the config takes.
#include <doctest/doctest.h>

#include <boost/asio/io_context.hpp>

#include <optional>

#include "node/panel/http_client.h"
#include "tests/node/test_servers.h"

namespace mesh::panel {
namespace {

using test::ServerMode;
using test::TestServer;

std::optional<HttpResult> exchange(boost::asio::io_context& io, const std::string& url, DurationMs timeout_ms) {
  std::optional<HttpResult> result;
  send_http(io, *parse_http_url(url), HttpRequest{}, timeout_ms, [&](HttpResult r) { result = std::move(r); });
  test::run_until(io, [&] { return result.has_value(); }, std::chrono::seconds(20));
  return result;
}

TEST_CASE("HTTPS verifies the certificate: a self-signed one is a TLS error") {
  boost::asio::io_context io;
  TestServer server(io, ServerMode::tls);
  const auto result = exchange(io, "https://127.0.0.1:" + std::to_string(server.port()), 5'000);
  REQUIRE(result.has_value());
  REQUIRE_FALSE(result->ok());
  CHECK(result->code() == HttpError::tls);
  CHECK(result->message().find("certificate verify failed") != std::string::npos);
}

TEST_CASE("a server that never answers, or never accepts: a timeout at the deadline") {
  boost::asio::io_context io;
  TestServer hold(io, ServerMode::hold);
  auto result = exchange(io, "http://127.0.0.1:" + std::to_string(hold.port()), 500);
  REQUIRE(result.has_value());
  CHECK(result->code() == HttpError::timeout);
  CHECK(result->message().find("no answer within 500 ms") != std::string::npos);
  test::FullBacklogListener full;
  result = exchange(io, "http://127.0.0.1:" + std::to_string(full.port()), 500);
  REQUIRE(result.has_value());
  CHECK(result->code() == HttpError::timeout);
}

TEST_CASE("a closed port: a connect error") {
  boost::asio::io_context io;
  const auto result = exchange(io, "http://127.0.0.1:" + std::to_string(test::closed_port()), 5'000);
  REQUIRE(result.has_value());
  CHECK(result->code() == HttpError::connect);
}

}  // namespace
}  // namespace mesh::panel

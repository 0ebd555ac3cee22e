// The API server on real sockets (node/api/server.h), in-process: keep-alive,
// auth on the wire, every limit (headers, body, slow and idle clients,
// connections, requests per connection), long-polls woken by notify(), the
// roster offer, and HTTPS. Bounded waits on outcomes, never on durations.
#include <doctest/doctest.h>

#include <boost/asio/connect.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ssl.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/ssl.hpp>

#include <csignal>

#include <array>
#include <atomic>
#include <future>
#include <thread>

#include "node/api/render.h"
#include "node/api/router.h"
#include "node/api/server.h"
#include "tests/api/fixture.h"
#include "tests/tools/run_process.h"

namespace mesh::api::testing {
namespace {

namespace beast = boost::beast;
namespace http = beast::http;
using Tcp = boost::asio::ip::tcp;
using Response = http::response<http::string_body>;

// A server on 127.0.0.1, its io_context on a thread of its own.
struct Served {
  explicit Served(ApiServerSettings settings = {}) {
    settings.listen = Endpoint{"127.0.0.1", 0};
    box.publish(snapshot(7));
    server = std::make_unique<ApiServer>(
        io, settings, std::make_shared<const TokenSet>(tokens()), box,
        [this](std::string raw, std::function<void(ApiResponse)> reply) {
          offered = raw;
          reply(roster_accepted(9, 4));
        });
    auto bound = server->start();
    REQUIRE_MESSAGE(bound.ok(), bound.message());
    port = bound->port;
    thread = std::thread([this] { io.run(); });
  }
  ~Served() {
    server->stop();
    work.reset();
    io.stop();
    thread.join();
  }
  boost::asio::io_context io;
  std::optional<boost::asio::executor_work_guard<boost::asio::io_context::executor_type>> work{io.get_executor()};
  SnapshotBox box;
  std::unique_ptr<ApiServer> server;
  std::uint16_t port = 0;
  std::string offered;
  std::thread thread;
};

// A client connection (plain), with a deadline on every operation.
struct Client {
  explicit Client(std::uint16_t port) : stream(io) {
    stream.expires_after(std::chrono::seconds(10));
    stream.connect(Tcp::endpoint(boost::asio::ip::make_address("127.0.0.1"), port));
  }
  Response send(http::verb verb, const std::string& target, const std::string& token = kReadToken,
                std::string body = "") {
    http::request<http::string_body> request{verb, target, 11};
    request.set(http::field::host, "127.0.0.1");
    if (!token.empty()) request.set(http::field::authorization, "Bearer " + token);
    request.body() = std::move(body);
    request.prepare_payload();
    stream.expires_after(std::chrono::seconds(10));
    http::write(stream, request);
    return read();
  }
  Response read() {
    Response response;
    beast::error_code error;
    http::read(stream, buffer, response, error);
    if (error) response.result(http::status::unknown);
    return response;
  }
  // True when the server closed the connection (EOF or reset) within 10 s.
  bool closed_by_server() {
    char byte;
    beast::error_code error;
    stream.expires_after(std::chrono::seconds(10));
    stream.read_some(boost::asio::buffer(&byte, 1), error);
    return error == boost::asio::error::eof || error == boost::asio::error::connection_reset;
  }
  boost::asio::io_context io;
  beast::tcp_stream stream;
  beast::flat_buffer buffer;
};

TEST_CASE("keep-alive: several requests on one connection, each with the index header") {
  Served served;
  Client client(served.port);
  for (int i = 0; i < 3; ++i) {
    const Response response = client.send(http::verb::get, "/v1/routes");
    CHECK(response.result_int() == 200);
    CHECK(response["X-Meshnode-Index"] == "7");
    CHECK(response.keep_alive());
  }
  CHECK(client.send(http::verb::get, "/v1/routes", "").result_int() == 401);
  CHECK(client.send(http::verb::get, "/nothing").result_int() == 404);
  CHECK(client.send(http::verb::delete_, "/v1/routes").result_int() == 405);
}

TEST_CASE("a request is noted in the snapshot box for the daemon; the daemon's peek is not") {
  Served served;
  (void)served.box.take_read();
  CHECK(served.box.peek() != nullptr);
  CHECK_FALSE(served.box.take_read());
  Client client(served.port);
  const Response response = client.send(http::verb::get, "/v1/routes");
  CHECK(response.result_int() == 200);
  CHECK(response["X-Meshnode-Snapshot-Ms"] == std::to_string(served.box.peek()->taken_ms));
  CHECK(served.box.take_read());
  CHECK_FALSE(served.box.take_read());  // taken: until the next request
}

TEST_CASE("headers over 8 KiB get 431, a body over the limit 413, a broken request 400; all close") {
  Served served;
  {
    Client client(served.port);
    http::request<http::string_body> request{http::verb::get, "/v1/routes", 11};
    request.set("X-Padding", std::string(9'000, 'x'));
    http::write(client.stream, request);
    const Response response = client.read();
    CHECK(response.result_int() == 431);
    CHECK(response.body().find(R"("error":"too_large")") != std::string::npos);
    CHECK(client.closed_by_server());
  }
  {
    Client client(served.port);
    const std::string head = "PUT /v1/roster HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer " +
                             std::string(kAdminToken) + "\r\nContent-Length: 2000000\r\n\r\n";
    boost::asio::write(client.stream, boost::asio::buffer(head));
    const Response response = client.read();
    CHECK(response.result_int() == 413);
    CHECK(response.body().find(R"("error":"too_large")") != std::string::npos);
    CHECK(served.offered.empty());  // nothing reached the node
  }
  {
    Client client(served.port);
    boost::asio::write(client.stream, boost::asio::buffer(std::string("NOT HTTP AT ALL\r\n\r\n")));
    CHECK(client.read().result_int() == 400);
    CHECK(client.closed_by_server());
  }
}

TEST_CASE("two Authorization headers on the wire are a 400, even when both are valid") {
  Served served;
  Client client(served.port);
  const std::string twice = std::string("GET /v1/routes HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ") +
                            kReadToken + "\r\nAuthorization: Bearer " + kReadToken + "\r\n\r\n";
  boost::asio::write(client.stream, boost::asio::buffer(twice));
  const Response response = client.read();
  CHECK(response.result_int() == 400);
  CHECK(response.body().find("more than one Authorization header") != std::string::npos);
}

TEST_CASE("a GET with a body is 413 before the body is read, and the answer survives the close") {
  Served served;
  {
    // 1 MiB of body, more than the socket buffers hold: the server answers
    // after the header and drains the rest, so the client reads its 413
    // instead of a reset.
    Client client(served.port);
    http::request<http::string_body> request{http::verb::get, "/v1/routes", 11};
    request.set(http::field::authorization, std::string("Bearer ") + kReadToken);
    request.body() = std::string(1 << 20, 'x');
    request.prepare_payload();
    beast::error_code error;
    http::write(client.stream, request, error);
    CHECK(!error);
    const Response response = client.read();
    CHECK(response.result_int() == 413);
    CHECK(response.body() == R"({"error":"too_large","message":"a GET request takes no body"})");
    CHECK(!response.keep_alive());
    CHECK(client.closed_by_server());
  }
  {
    Client client(served.port);
    const std::string chunked = std::string("GET /healthz HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n") +
                                "3\r\nabc\r\n0\r\n\r\n";
    boost::asio::write(client.stream, boost::asio::buffer(chunked));
    CHECK(client.read().result_int() == 413);
  }
  // An empty body said in so many words is no body.
  Client client(served.port);
  const std::string empty = std::string("GET /v1/routes HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\n") +
                            "Authorization: Bearer " + kReadToken + "\r\n\r\n";
  boost::asio::write(client.stream, boost::asio::buffer(empty));
  CHECK(client.read().result_int() == 200);
  CHECK(served.server->stats().requests_rejected == 2);
}

TEST_CASE("the shared bodies go out by sendfile byte for byte, on keep-alive, and as text over nothing else") {
  Served served;
  auto expected = served.box.latest();
  REQUIRE(routes_body(*expected)->fd() >= 0);  // a sealed memfd: the sendfile path is the one tested
  Client client(served.port);
  for (int i = 0; i < 3; ++i) {
    const Response routes = client.send(http::verb::get, "/v1/routes");
    CHECK(routes.result_int() == 200);
    CHECK(routes.body() == routes_body(*expected)->text());
    CHECK(routes["Content-Type"] == "application/json");
    CHECK(routes["X-Meshnode-Index"] == "7");
    const Response servers = client.send(http::verb::get, "/v1/servers");
    CHECK(servers.body() == servers_body(*expected)->text());
    // A body written the ordinary way still follows on the same connection.
    CHECK(client.send(http::verb::get, "/v1/mesh").result_int() == 200);
  }
}

TEST_CASE("a client that resets the connection before its body is sent costs only its connection") {
  Served served;
  for (int i = 0; i < 50; ++i) {
    Client leaving(served.port);
    http::request<http::string_body> request{http::verb::get, i % 2 ? "/v1/servers" : "/v1/routes", 11};
    request.set(http::field::host, "127.0.0.1");
    request.set(http::field::authorization, std::string("Bearer ") + kReadToken);
    http::write(leaving.stream, request);
    // SO_LINGER 0: close() resets at once, so the server's write meets
    // EPIPE or ECONNRESET (sendfile has no MSG_NOSIGNAL: SIGPIPE must not
    // end the process).
    leaving.stream.socket().set_option(boost::asio::socket_base::linger(true, 0));
    leaving.stream.socket().close();
  }
  Client after(served.port);
  CHECK(after.send(http::verb::get, "/v1/servers").result_int() == 200);
  // The reset rarely lands between the header and sendfile; the guard that
  // makes that case harmless is the process's SIGPIPE disposition.
  struct sigaction current {};
  REQUIRE(::sigaction(SIGPIPE, nullptr, &current) == 0);
  const bool ignored = current.sa_handler == SIG_IGN;
  CHECK(ignored);
}

TEST_CASE("a client that stops reading a body sent by sendfile is cut off at the write deadline") {
  ApiServerSettings settings;
  settings.limits.write_ms = 300;
  Served served(settings);
  // A snapshot whose /v1/routes is far larger than both sockets' buffers.
  auto big = snapshot(8);
  const auto small_roster = big->roster;          // the server states point into these
  const auto small_evaluation = big->evaluation;
  auto roster = std::make_shared<Roster>(*small_roster);
  auto evaluation = std::make_shared<verdict::Evaluation>(*small_evaluation);
  for (int i = 0; i < 100'000; ++i) {
    roster->routes.push_back(Route{"r" + std::to_string(i), std::string(100, 'n')});
    evaluation->routes.push_back({"r" + std::to_string(i), {"de-1", "de-2"}, false, ""});
  }
  big->roster = roster;
  big->evaluation = evaluation;
  served.box.publish(big);
  const std::size_t body_size = routes_body(*big)->text().size();
  REQUIRE(body_size > 15'000'000);  // loopback buffers hold a few MB

  Client stalled(served.port);
  http::request<http::string_body> request{http::verb::get, "/v1/routes", 11};
  request.set(http::field::host, "127.0.0.1");
  request.set(http::field::authorization, std::string("Bearer ") + kReadToken);
  http::write(stalled.stream, request);
  // Another client is served meanwhile.
  Client quick(served.port);
  CHECK(quick.send(http::verb::get, "/v1/mesh").result_int() == 200);
  // The stalled connection is reset by the server at its deadline (quick's
  // stays open), then reading gets at most what the buffers held, then the
  // reset, short of the body.
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  while (served.server->stats().connections_open > 1 && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  CHECK(served.server->stats().connections_open == 1);
  std::size_t received = 0;
  beast::error_code error;
  std::array<char, 65536> chunk;
  stalled.stream.expires_after(std::chrono::seconds(20));
  while (!error) received += stalled.stream.read_some(boost::asio::buffer(chunk), error);
  CHECK((error == boost::asio::error::eof || error == boost::asio::error::connection_reset));
  CHECK(received < body_size);
}

TEST_CASE("a slow client is cut off at its deadline and never blocks another") {
  ApiServerSettings settings;
  settings.limits.first_request_ms = 300;
  Served served(settings);
  Client slow(served.port);
  boost::asio::write(slow.stream, boost::asio::buffer(std::string("GET /v1/rou")));
  Client quick(served.port);
  CHECK(quick.send(http::verb::get, "/v1/mesh").result_int() == 200);
  CHECK(slow.closed_by_server());
  Client idle(served.port);  // says nothing at all
  CHECK(idle.closed_by_server());
  CHECK(served.server->stats().requests_rejected >= 1);
}

TEST_CASE("connections beyond the bound are closed at once; the others are served") {
  ApiServerSettings settings;
  settings.limits.connections_max = 3;
  Served served(settings);
  std::vector<std::unique_ptr<Client>> held;
  for (int i = 0; i < 3; ++i) {
    held.push_back(std::make_unique<Client>(served.port));
    CHECK(held.back()->send(http::verb::get, "/healthz", "").result_int() == 200);
  }
  Client extra(served.port);
  CHECK(extra.closed_by_server());
  CHECK(served.server->stats().connections_refused == 1);
  CHECK(held.front()->send(http::verb::get, "/healthz", "").result_int() == 200);
}

TEST_CASE("the daemon hears once when connections start being shed, and once when they stop") {
  ApiServerSettings settings;
  settings.limits.connections_max = 1;
  Served served(settings);
  constexpr UnixMs kNow = 1'700'000'000'000;
  CHECK(!served.server->shedding_change(kNow));
  Client held(served.port);
  CHECK(held.send(http::verb::get, "/healthz", "").result_int() == 200);
  Client refused(served.port);  // the same address, as greedy: refused
  CHECK(refused.closed_by_server());
  const auto started = served.server->shedding_change(kNow + 1'000);
  REQUIRE(started.has_value());
  CHECK(started->started);
  CHECK(started->shed == 1);
  CHECK(started->message.find("1 refused at the cap") != std::string::npos);
  CHECK(!served.server->shedding_change(kNow + 2'000));
  CHECK(!served.server->shedding_change(kNow + 1'000 + kSheddingQuietMs - 1));
  const auto ended = served.server->shedding_change(kNow + 1'000 + kSheddingQuietMs);
  REQUIRE(ended.has_value());
  CHECK(!ended->started);
  // /metrics counts it.
  const Response metrics = held.send(http::verb::get, "/metrics");
  CHECK(metrics.body().find("meshnode_api_connections_shed_total{reason=\"full\"} 1\n") != std::string::npos);
  CHECK(metrics.body().find("meshnode_api_connections{token=\"valid\"} 1\n") != std::string::npos);
}

TEST_CASE("a connection that presented a valid token keeps its place; an untrusted one gives way") {
  ApiServerSettings settings;
  settings.limits.connections_max = 2;
  Served served(settings);
  Client trusted(served.port);
  CHECK(trusted.send(http::verb::get, "/v1/routes").result_int() == 200);
  Client untrusted(served.port);
  CHECK(untrusted.send(http::verb::get, "/healthz", "").result_int() == 200);
  // From another address with no connection: the untrusted one is evicted.
  boost::asio::io_context io;
  beast::tcp_stream stream(io);
  stream.socket().open(Tcp::v4());
  stream.socket().bind(Tcp::endpoint(boost::asio::ip::make_address("127.0.0.9"), 0));
  stream.expires_after(std::chrono::seconds(10));
  stream.connect(Tcp::endpoint(boost::asio::ip::make_address("127.0.0.1"), served.port));
  CHECK(untrusted.closed_by_server());
  CHECK(trusted.send(http::verb::get, "/v1/routes").result_int() == 200);
  CHECK(served.server->stats().connections_evicted == 1);
  CHECK(served.server->stats().connections_trusted == 1);
}

TEST_CASE("the last request a connection may make is answered with Connection: close") {
  Served served;
  Client client(served.port);
  Response last;
  for (std::size_t i = 0; i < kRequestsPerConnectionMax; ++i) last = client.send(http::verb::get, "/healthz", "");
  CHECK(last.result_int() == 200);
  CHECK(!last.keep_alive());
  CHECK(client.closed_by_server());
}

TEST_CASE("a long-poll is held until the index moves, then answers with the new index") {
  Served served;
  auto held = std::async(std::launch::async, [&] {
    Client client(served.port);
    return client.send(http::verb::get, "/v1/routes?index=7&wait=60s");
  });
  // Until the index moves it stays held.
  CHECK(held.wait_for(std::chrono::milliseconds(300)) == std::future_status::timeout);
  served.box.publish(snapshot(8));
  served.server->notify();
  REQUIRE(held.wait_for(std::chrono::seconds(10)) == std::future_status::ready);
  const Response response = held.get();
  CHECK(response.result_int() == 200);
  CHECK(response["X-Meshnode-Index"] == "8");
  // A wait that runs out answers with the index as it is.
  Client client(served.port);
  CHECK(client.send(http::verb::get, "/v1/routes?index=8&wait=200ms")["X-Meshnode-Index"] == "8");
}

TEST_CASE("PUT /v1/roster hands the body to the node and returns its answer") {
  Served served;
  Client client(served.port);
  const Response response = client.send(http::verb::put, "/v1/roster", kAdminToken, "signed-roster-bytes");
  CHECK(response.result_int() == 200);
  CHECK(response.body() == R"({"roster_version":9,"servers":4})");
  CHECK(served.offered == "signed-roster-bytes");
  CHECK(client.send(http::verb::put, "/v1/roster", kReadToken, "x").result_int() == 403);
}

TEST_CASE("with a certificate the API speaks HTTPS only") {
  test::TempDir dir;
  auto made = test::run_process({"/usr/bin/openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt",
                                 "ec_paramgen_curve:P-256", "-nodes", "-days", "2", "-subj", "/CN=127.0.0.1",
                                 "-keyout", dir.file("key.pem"), "-out", dir.file("cert.pem")});
  REQUIRE(made.exit_code == 0);
  ApiServerSettings settings;
  settings.tls_cert_file = dir.file("cert.pem");
  settings.tls_key_file = dir.file("key.pem");
  Served served(settings);
  CHECK(served.server->tls());
  boost::asio::ssl::context tls(boost::asio::ssl::context::tls_client);
  tls.load_verify_file(dir.file("cert.pem"));
  tls.set_verify_mode(boost::asio::ssl::verify_peer);
  boost::asio::io_context io;
  beast::ssl_stream<beast::tcp_stream> stream(io, tls);
  beast::get_lowest_layer(stream).expires_after(std::chrono::seconds(10));
  beast::get_lowest_layer(stream).connect(Tcp::endpoint(boost::asio::ip::make_address("127.0.0.1"), served.port));
  stream.handshake(boost::asio::ssl::stream_base::client);
  http::request<http::string_body> request{http::verb::get, "/v1/routes", 11};
  request.set(http::field::authorization, std::string("Bearer ") + kReadToken);
  http::write(stream, request);
  beast::flat_buffer buffer;
  Response response;
  http::read(stream, buffer, response);
  CHECK(response.result_int() == 200);
  // Plain HTTP to the HTTPS port gets no answer.
  Client plain(served.port);
  CHECK(plain.send(http::verb::get, "/healthz", "").result() == http::status::unknown);
  // A key that does not match its certificate is refused at start.
  ApiServerSettings broken = settings;
  test::run_process({"/usr/bin/openssl", "genpkey", "-algorithm", "ed25519", "-out", dir.file("other.pem")});
  broken.tls_key_file = dir.file("other.pem");
  boost::asio::io_context io2;
  SnapshotBox box;
  ApiServer refused(io2, broken, std::make_shared<const TokenSet>(tokens()), box,
                    [](std::string, std::function<void(ApiResponse)>) {});
  auto started = refused.start();
  CHECK(!started.ok());
  CHECK(started.code() == ApiError::tls);
  CHECK(started.message().find("key") != std::string::npos);
}

}  // namespace
}  // namespace mesh::api::testing

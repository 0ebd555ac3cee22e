// A plain HTTP/1.1 client for the daemon's API tests (Boost.Beast, sync,
// one request per connection, 10 s deadline). Header-only; tests only.
#pragma once

#include <boost/asio/io_context.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>

#include <string>

namespace mesh::test {

struct HttpResult {
  unsigned status = 0;  // 0: no answer (refused, reset, timed out)
  std::string body;
  std::string index;    // X-Meshnode-Index
  std::string snapshot_ms;  // X-Meshnode-Snapshot-Ms
  std::string starting;     // X-Meshnode-Starting
  std::string content_type;
  std::string error;  // status 0: the step that failed, and why
};

inline HttpResult http_request(const std::string& host, std::uint16_t port, boost::beast::http::verb verb,
                               const std::string& target, const std::string& token = "",
                               const std::string& body = "") {
  namespace beast = boost::beast;
  namespace http = beast::http;
  boost::asio::io_context io;
  beast::tcp_stream stream(io);
  beast::error_code error;
  stream.expires_after(std::chrono::seconds(10));
  stream.connect(boost::asio::ip::tcp::endpoint(boost::asio::ip::make_address(host), port), error);
  if (error) return {.error = "connect: " + error.message()};
  http::request<http::string_body> request{verb, target, 11};
  request.set(http::field::host, host);
  if (!token.empty()) request.set(http::field::authorization, "Bearer " + token);
  request.body() = body;
  request.prepare_payload();
  http::write(stream, request, error);
  if (error) return {.error = "write: " + error.message()};
  beast::flat_buffer buffer;
  http::response<http::string_body> response;
  http::read(stream, buffer, response, error);
  if (error) return {.error = "read: " + error.message()};
  return {response.result_int(), response.body(), std::string(response["X-Meshnode-Index"]),
          std::string(response["X-Meshnode-Snapshot-Ms"]), std::string(response["X-Meshnode-Starting"]),
          std::string(response[http::field::content_type])};
}

}  // namespace mesh::test

// Fuzz target: the HTTP request path of the panel API (node/api/session.h,
// node/api/router.h, docs/API.md). Input: the bytes a client sends on one
// connection. They go through Boost.Beast's request parser configured as
// the session configures it (header_limit kHeaderBytesMax, body_limit
// kBodyBytesMax, eager as http::read sets it), one request after another as
// on a keep-alive connection, and each parsed request becomes the router's
// ApiRequest exactly as Session::on_read builds it; the router answers from
// the fixed snapshot and tokens of tests/api/fixture.h.
//
// Properties:
// - a parsed request's body is within kBodyBytesMax;
// - routing is a pure function: the same request routes to the same answer;
// - without a valid bearer token nothing but the status page and /healthz
//   answers 2xx, a 401 carries WWW-Authenticate and a 405 carries Allow;
// - only an admin token can offer a roster (PUT, the body as the record);
// - a long-poll waits only for an authorized request, for (0, kWaitMaxMs],
//   and a request already held is answered, never held again;
// - every JSON body parses as JSON.
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>

#include <boost/beast/core/error.hpp>
#include <boost/beast/http.hpp>
#include <nlohmann/json.hpp>

#include "node/api/limits.h"
#include "node/api/router.h"
#include "tests/api/fixture.h"
#include "tests/fuzz/fuzz_support.h"

namespace {

using namespace mesh;
using namespace mesh::api;
namespace http = boost::beast::http;

constexpr int kRequestsPerInputMax = 8;

struct Fixture {
  std::shared_ptr<ApiSnapshot> snapshot = testing::snapshot();
  TokenSet tokens = testing::tokens();
};

std::optional<Role> role_of(const ApiRequest& request, const TokenSet& tokens) {
  constexpr std::string_view kBearer = "Bearer ";
  std::string_view header = request.authorization;
  if (header.size() <= kBearer.size() || header.substr(0, kBearer.size()) != kBearer) return std::nullopt;
  return tokens.role_of(header.substr(kBearer.size()));
}

bool has_header(const ApiResponse& response, std::string_view name) {
  for (const auto& [key, value] : response.headers) {
    if (key == name) return true;
  }
  return false;
}

void check_response(const ApiResponse& response, const std::optional<Role>& role) {
  FUZZ_CHECK(response.status >= 200 && response.status < 600);
  if (!role && response.status < 300) {
    FUZZ_CHECK(response.content_type == "text/html; charset=utf-8" ||
               response.text() == R"({"status":"ok"})");
  }
  if (response.status == 401) FUZZ_CHECK(has_header(response, "WWW-Authenticate"));
  if (response.status == 405) FUZZ_CHECK(has_header(response, "Allow"));
  if (response.content_type == "application/json") {
    FUZZ_CHECK(nlohmann::json::accept(response.text()));
  }
}

void check_routing(const ApiRequest& request, const Fixture& f) {
  FUZZ_CHECK(request.body.size() <= kBodyBytesMax);
  const auto role = role_of(request, f.tokens);
  RouteDecision decision = route(request, *f.snapshot, f.tokens, false);
  RouteDecision again = route(request, *f.snapshot, f.tokens, false);
  FUZZ_CHECK(decision.kind == again.kind && decision.response.status == again.response.status);
  FUZZ_CHECK(decision.response.text() == again.response.text());
  switch (decision.kind) {
    case RouteDecision::Kind::respond:
      check_response(decision.response, role);
      break;
    case RouteDecision::Kind::wait:
      FUZZ_CHECK(role.has_value() && decision.wait_ms > 0 && decision.wait_ms <= kWaitMaxMs);
      break;
    case RouteDecision::Kind::offer_roster:
      FUZZ_CHECK(role == Role::admin && request.method == "PUT");
      FUZZ_CHECK(!decision.roster.empty() && decision.roster == request.body);
      break;
  }
  RouteDecision held = route(request, *f.snapshot, f.tokens, true);
  FUZZ_CHECK(held.kind != RouteDecision::Kind::wait);
  if (held.kind == RouteDecision::Kind::respond) check_response(held.response, role);
}

// Feeds `bytes` to a fresh parser as http::read would from a connection
// that delivers them and then closes. Returns the bytes consumed; `done`
// tells whether a whole request was parsed.
std::size_t parse_one(std::string_view bytes, http::request_parser<http::string_body>& parser,
                      bool& done) {
  parser.header_limit(kHeaderBytesMax);
  parser.body_limit(kBodyBytesMax);
  parser.eager(true);
  std::size_t offset = 0;
  boost::beast::error_code error;
  while (!parser.is_done()) {
    const std::size_t used = parser.put(
        boost::asio::const_buffer(bytes.data() + offset, bytes.size() - offset), error);
    offset += used;
    if (error == http::error::need_more) {
      // Every byte was presented: as http::read after a read that hits the
      // end of the stream, the parser gets put_eof (never the same bytes
      // again, which Beast does not allow).
      error = {};
      parser.put_eof(error);
      break;
    }
    if (error) break;
    if (used == 0) break;
  }
  done = !error && parser.is_done();
  return offset;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static const Fixture* f = new Fixture();
  std::string_view rest = fuzz::text_of(data, size);
  for (int served = 0; served < kRequestsPerInputMax && !rest.empty(); ++served) {
    http::request_parser<http::string_body> parser;
    bool done = false;
    const std::size_t used = parse_one(rest, parser, done);
    if (!done) return 0;  // the session answers 400/413/431 or closes
    const auto& message = parser.get();
    const ApiRequest request{std::string(message.method_string()), std::string(message.target()),
                             std::string(message[http::field::authorization]), message.body()};
    check_routing(request, *f);
    if (!message.keep_alive() || used == 0) return 0;
    rest.remove_prefix(used);
  }
  return 0;
}

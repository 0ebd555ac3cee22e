// A request and a response as the router sees them (node/api/router.h):
// plain values, no Beast type, so the router is a pure function that tests
// call directly.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "node/api/shared_body.h"

namespace mesh::api {

struct ApiRequest {
  std::string method;         // "GET", "PUT", ...
  std::string target;         // path and query: "/v1/servers?status=ok"
  std::string authorization;  // the Authorization header's value, "" if absent
  std::string body;
  bool authorization_repeated = false;  // more than one Authorization header
};

struct ApiResponse {
  unsigned status = 200;
  std::string content_type = "application/json";
  std::string body;
  // When set, the body instead of `body`: one rendering shared by every
  // response to the same snapshot, sent without a copy.
  std::shared_ptr<const SharedBody> shared_body;
  std::vector<std::pair<std::string, std::string>> headers;  // Allow, WWW-Authenticate, X-Meshnode-Index

  std::string_view text() const { return shared_body ? std::string_view(shared_body->text()) : std::string_view(body); }
};

}  // namespace mesh::api

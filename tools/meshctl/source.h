// Where meshctl's reading commands get their answers (README.md, "meshctl"):
// a node's panel API (--api URL --token-file FILE) or a node's store opened
// read-only (--data DIR, no daemon needed). Both answer in the API's JSON
// shapes (docs/API.md), so each command has one printer for both.
#pragma once

#include <memory>
#include <string>

#include <nlohmann/json.hpp>

#include "tools/meshctl/exit_codes.h"

namespace mesh::ctl {

struct SourceOptions {
  std::string data_dir;     // --data: a store
  std::string api_url;      // --api: http://host:port or https://host:port
  std::string token_file;   // --token-file: the bearer token on its first line
  std::string cacert_file;  // --cacert: one more trusted CA (PEM), https only
  bool insecure = false;    // --insecure: https without verifying the certificate
};

// GET /v1/servers filters (docs/API.md); empty fields do not filter.
struct ServerFilter {
  std::string status;   // ok | unavailable | unreachable | no_data
  std::string country;  // ISO 3166-1 alpha-2, upper case
  std::string route;    // a route id
};

class NodeSource {
 public:
  virtual ~NodeSource() = default;
  // GET /v1/servers with `filter`: an array of server objects, roster order.
  virtual CtlResult<nlohmann::json> servers(const ServerFilter& filter) = 0;
  // GET /v1/routes: an array of route objects, roster order; with a
  // `country` (ISO 3166-1 alpha-2), the rotation for users there
  // (GET /v1/routes?country=).
  virtual CtlResult<nlohmann::json> routes(const std::string& country) = 0;
  // GET /v1/servers/{id}: the server object with metrics, self_check and
  // observers; unusable ("no server 'x'") for an id outside the roster.
  virtual CtlResult<nlohmann::json> server(const std::string& id) = 0;
  // From the API: GET /v1/mesh. From a store: what the store says of its
  // node (node, roster_version, servers, records, reports, boot_counter,
  // volume); a store holds no digest or peers.
  virtual CtlResult<nlohmann::json> mesh() = 0;
  virtual bool from_api() const = 0;
};

// Checks the options (exactly one of --data and --api; --token-file with
// --api; --cacert or --insecure only with https, not both), reads the token,
// warns on stderr where the token or the answers are not protected
// (--insecure; http:// to a host other than loopback) and opens the source.
// A store is opened read-only and held until the source is destroyed.
CtlResult<std::unique_ptr<NodeSource>> open_source(const SourceOptions& options);

// The client options for --api (the checks and warnings of open_source),
// for commands that do more than read (roster push).
struct ApiClientOptions;
CtlResult<ApiClientOptions> api_client_options(const SourceOptions& options);

// The API's message for a server id outside the roster.
std::string no_server_message(const std::string& id);

}  // namespace mesh::ctl

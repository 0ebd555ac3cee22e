// The meshctl subcommands. Each returns an exit code (exit_codes.h) and
// writes its result to stdout, its errors to stderr.
#pragma once

#include <cstdint>
#include <string>

#include "tools/meshctl/read_command.h"

namespace mesh::ctl {

struct KeygenOptions {
  std::string out_path;
  bool json = false;
};
int run_keygen(const KeygenOptions& options);

struct KeyShowOptions {
  std::string path;  // a secret key file (meshctl keygen's)
  bool json = false;
};
// The public key (64 hex) of an existing secret key file.
int run_key_show(const KeyShowOptions& options);

struct RosterSignOptions {
  std::string key_path;     // the operator's secret key file
  std::string toml_path;    // the human-written roster
  std::string out_path;     // where the signed roster record goes
  std::uint64_t version = 0;  // 0: take `version` from the TOML file
  bool json = false;
};
int run_roster_sign(const RosterSignOptions& options);

struct RosterShowOptions {
  std::string data_dir;      // read the store's roster, or
  std::string file_path;     // a signed roster file
  std::string operator_key;  // hex public key the signature is checked against; required unless
  bool no_verify = false;    // show it unchecked, every line saying NOT VERIFIED
  bool json = false;
};
int run_roster_show(const RosterShowOptions& options);

struct RosterPushOptions {
  SourceOptions source;    // --api, --token-file, --cacert, --insecure (no --data)
  std::string file_path;   // the signed roster file (meshctl roster sign --out)
  bool json = false;
};
// PUT /v1/roster on a node (admin token): it spreads from there by gossip.
int run_roster_push(const RosterPushOptions& options);

struct RecordsOptions {
  std::string data_dir;
  std::string operator_key;  // hex; required with verify: the roster is checked against it first
  bool verify = false;
  bool json = false;
};
// Lists the store's records; with verify, checks each as a node accepts it.
int run_records(const RecordsOptions& options);

struct StatusOptions {
  ReadOptions read;
  ServerFilter filter;
};
// Every server's status, caption and failing witnesses (GET /v1/servers).
int run_status(const StatusOptions& options);

struct RoutesOptions {
  ReadOptions read;
  std::string country;  // "": the global answer; else the rotation for users there
};
// Each route, degraded or not, and its servers in rotation (GET /v1/routes).
int run_routes(const RoutesOptions& options);

struct ServerOptions {
  ReadOptions read;
  std::string id;
};
// One server in detail, with each observer's streak (GET /v1/servers/{id}).
int run_server(const ServerOptions& options);

// The node's view of the mesh (GET /v1/mesh); from a store: its identity,
// roster, records and volume today.
int run_mesh(const ReadOptions& options);

struct TokenOptions {
  std::string role = "read";
  bool json = false;
};
// A new API token and its token-file line (docs/API.md, "Authentication").
int run_token_new(const TokenOptions& options);

}  // namespace mesh::ctl

// The meshctl subcommands. Each returns an exit code (exit_codes.h) and
// writes its result to stdout, its errors to stderr.
#pragma once

#include <cstdint>
#include <string>

namespace mesh::ctl {

struct KeygenOptions {
  std::string out_path;
  bool json = false;
};
int run_keygen(const KeygenOptions& options);

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
  std::string operator_key;  // hex public key; when set the signature is checked
  bool json = false;
};
int run_roster_show(const RosterShowOptions& options);

struct RecordsOptions {
  std::string data_dir;
  std::string operator_key;  // hex; with verify, also checks the roster's signature
  bool verify = false;
  bool json = false;
};
int run_records(const RecordsOptions& options);

struct StatusOptions {
  std::string data_dir;
  bool json = false;
};
// The verdicts the node's daemon last stored (docs/STORAGE.md, "Agent state").
int run_status(const StatusOptions& options);

struct MeshOptions {
  std::string data_dir;
  bool json = false;
};
// The node itself as its store records it: identity, roster, volume today.
int run_mesh(const MeshOptions& options);

}  // namespace mesh::ctl

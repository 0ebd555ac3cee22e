// `meshnode --check-config FILE` (docs/CONFIG.md, "Checking a config"):
// everything a start would load and check, in the start's order, without
// starting and without writing anything: the key file; the roster file and
// its signature against operator_key (or the roster the data dir holds);
// this node's entry in that roster, with its key and gossip endpoint; the
// gossip and API addresses, bound and released; the API's token file, its
// mode, and its certificate; the data dir, writable by the user that runs
// the check, and whose store it holds. Each check is one line.
#pragma once

#include <string>
#include <vector>

#include "node/config.h"

namespace mesh::node {

enum class CheckOutcome { ok, warn, fail };

struct CheckLine {
  CheckOutcome outcome = CheckOutcome::ok;
  std::string what;    // "key file", "roster", "gossip listen", ...
  std::string detail;  // what was found, or what is wrong and what to do
};

// REQUIRES: libsodium initialised.
std::vector<CheckLine> preflight(const NodeConfig& config);

// "ok    key file: ...", "WARN  ...", "FAIL  ..."; one line each.
std::string format_check(const CheckLine& line);

}  // namespace mesh::node

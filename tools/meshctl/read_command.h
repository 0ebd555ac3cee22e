// The shape every reading command shares (status, routes, server, mesh):
// open the source (API or store), fetch one answer, print it as JSON or
// as text. Printers read the answer with nlohmann's checked accessors; an
// answer without the documented fields ends the command with exit 2.
#pragma once

#include <functional>
#include <string_view>

#include <nlohmann/json.hpp>

#include "tools/meshctl/output.h"
#include "tools/meshctl/source.h"

namespace mesh::ctl {

// Shared by the reading commands: where from, and how to print.
struct ReadOptions {
  SourceOptions source;
  bool json = false;      // the API's JSON (or the store's equivalent)
  bool no_color = false;  // never colour, even on a terminal
};

using Fetch = std::function<CtlResult<nlohmann::json>(NodeSource&)>;
using Print = std::function<void(const nlohmann::json& answer, const NodeSource& source, const Style& style)>;

// The exit code: 0 printed, else what the failure says (reported on stderr
// as "meshctl <command>: ...").
int run_read_command(std::string_view command, const ReadOptions& options, const Fetch& fetch,
                     const Print& print);

}  // namespace mesh::ctl

// What changed between two verdict snapshots, as log lines (node/log.h):
// one per server whose status changed, per route whose rotation or
// degradation changed, per observer found or cleared unreliable. Pure.
#pragma once

#include <string>
#include <vector>

#include "node/log.h"
#include "verdict/evaluation.h"

namespace mesh::node {

struct LogLine {
  LogLevel level = LogLevel::info;
  std::string event;    // "verdict", "route", "unreliable_observer"
  std::string message;
  LogFields fields;
};

// `before` null: the first snapshot since start; every server that is
// unavailable or unreachable and every degraded route is reported, plus one
// summary line that counts the servers without data yet (a node that has
// just started has heard from nobody: that is not news, and no line per
// server says so).
std::vector<LogLine> verdict_transitions(const verdict::Evaluation* before,
                                         const verdict::Evaluation& after);

}  // namespace mesh::node

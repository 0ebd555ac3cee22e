// What changed between two verdict snapshots, as log lines (node/log.h):
// one per server whose status changed, per route whose rotation or
// degradation changed, per observer found or cleared unreliable. Pure.
#pragma once

#include <set>
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
// server says so). With `unheard`, the first snapshot fills it with those
// servers; later, such a server's first report (no_data -> ok) is logged at
// debug only, and once the last of them has moved, one summary line says
// so. Any other move of theirs is logged as usual.
std::vector<LogLine> verdict_transitions(const verdict::Evaluation* before, const verdict::Evaluation& after,
                                         std::set<ServerId>* unheard = nullptr);

// stale_after_ms after the node's start: a warning for each server it has
// still not heard from (every live server has sent a report by then, so
// that silence is news), and `unheard` emptied.
std::vector<LogLine> silent_since_start(const verdict::Evaluation& now, std::set<ServerId>& unheard);

}  // namespace mesh::node

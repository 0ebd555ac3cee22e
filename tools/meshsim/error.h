// The simulator's error values: a bad scenario (file, field or rule) or an
// unknown built-in. The message names the line and field where it can.
#pragma once

#include "common/result.h"

namespace mesh::sim {

enum class ScenarioError {
  unreadable,        // the file cannot be read
  syntax,            // not TOML (message: line and column)
  bad_field,         // a field of the wrong type or out of its range (message: line and name)
  unknown_field,     // a key the format does not define (catches typos)
  invalid,           // well-formed but inconsistent (unknown server, times out of order...)
  unknown_scenario,  // no built-in of that name
};
const char* to_string(ScenarioError error);

template <class T>
using ScenarioResult = Result<T, ScenarioError>;

}  // namespace mesh::sim

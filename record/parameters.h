// The documented range of every roster parameter (docs/CONFIG.md), as one
// table shared by validation, the TOML reader and writer, and the docs.
#pragma once

#include <cstdint>
#include <span>

#include "record/roster.h"

namespace mesh {

struct ParameterSpec {
  const char* name;      // the field's name in Parameters and in [params]
  std::int64_t min;      // inclusive
  std::int64_t max;      // inclusive
  // Reads the field (uint64 values above INT64_MAX read as INT64_MAX).
  std::int64_t (*get)(const Parameters&);
  // Writes the field. REQUIRES: min <= value <= max.
  void (*set)(Parameters&, std::int64_t value);
};

// Every field of Parameters, in declaration order (the wire order).
std::span<const ParameterSpec> parameter_specs();

// Checks each parameter against its range, then the cross-field rule
// stale_after_ms >= heartbeat_interval_ms. The message names the field.
Status<RosterError> validate_parameters(const Parameters& params);

}  // namespace mesh

#include "record/parameters.h"

#include <limits>
#include <string>

namespace mesh {
namespace {

template <class T>
std::int64_t read_field(T value) {
  if constexpr (std::is_unsigned_v<T> && sizeof(T) == 8) {
    if (value > static_cast<T>(std::numeric_limits<std::int64_t>::max())) {
      return std::numeric_limits<std::int64_t>::max();
    }
  }
  return static_cast<std::int64_t>(value);
}

#define MESH_PARAMETER(field, lo, hi)                                                     \
  ParameterSpec {                                                                         \
    #field, lo, hi, [](const Parameters& p) { return read_field(p.field); },              \
        [](Parameters& p, std::int64_t v) { p.field = static_cast<decltype(p.field)>(v); } \
  }

constexpr std::int64_t kSecondMs = 1000;
constexpr std::int64_t kDayMs = 86'400'000;

// Ranges: wide enough for any real fleet, narrow enough that a typo (a
// value in seconds where ms are meant, a negative number) is caught.
const ParameterSpec kSpecs[] = {
    MESH_PARAMETER(heartbeat_interval_ms, kSecondMs, kDayMs),
    MESH_PARAMETER(stale_after_ms, kSecondMs, 7 * kDayMs),
    MESH_PARAMETER(probe_interval_ms, kSecondMs, kDayMs),
    MESH_PARAMETER(fail_streak, 1, 1000),
    MESH_PARAMETER(unreliable_fraction_permille, 1, 1000),
    MESH_PARAMETER(unreliable_min_targets, 1, static_cast<std::int64_t>(kRosterServersMax)),
    MESH_PARAMETER(witnesses_per_country, 0, 1000),
    MESH_PARAMETER(quorum_witnesses, 2, 1000),
    MESH_PARAMETER(epoch_ms, 60 * kSecondMs, 30 * kDayMs),
    MESH_PARAMETER(max_clock_skew_ms, 0, 3'600'000),
    MESH_PARAMETER(volume_bytes_per_day_max, 1 << 20, std::int64_t{1} << 40),
};

#undef MESH_PARAMETER

}  // namespace

std::span<const ParameterSpec> parameter_specs() { return kSpecs; }

Status<RosterError> validate_parameters(const Parameters& params) {
  for (const ParameterSpec& spec : kSpecs) {
    std::int64_t value = spec.get(params);
    if (value < spec.min || value > spec.max) {
      return make_error(RosterError::bad_parameter,
                        std::string("params.") + spec.name + ": " + std::to_string(value) +
                            " is outside " + std::to_string(spec.min) + ".." +
                            std::to_string(spec.max));
    }
  }
  if (params.stale_after_ms < params.heartbeat_interval_ms) {
    return make_error(RosterError::bad_parameter,
                      "params.stale_after_ms: " + std::to_string(params.stale_after_ms) +
                          " is below heartbeat_interval_ms " +
                          std::to_string(params.heartbeat_interval_ms));
  }
  return Ok{};
}

}  // namespace mesh

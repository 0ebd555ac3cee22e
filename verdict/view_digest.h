// ViewDigest: one observer's view, sorted once into what the tally reads.
// At 3000 servers with full-mesh views a full evaluation adds 9 M results;
// almost all of them get through, and what such a result adds depends on
// its target alone. The digest keeps those as runs of consecutive targets
// (a healthy view is one or a few runs) and copies the rest side by side,
// so that the tally adds a run to its cells in a vectorised loop instead of
// reading 48 bytes per result, and reads the others in order instead of a
// cache miss each (issue 41; docs/VERDICTS.md, "Full and incremental
// evaluation").
//
// A digest is made once per report (Evaluator::upsert), against the roster
// it is evaluated on; it holds exactly the results for_each_counted_result
// visits, nothing read twice, nothing skipped.
#pragma once

#include <cstdint>
#include <vector>

#include "record/parameters.h"
#include "verdict/fleet.h"
#include "verdict/observed.h"

namespace mesh::verdict {

// A counted result is *plain* when it gets through (fail_streak 0), is not
// flagged recovered and makes no silence claim: it adds to the same cells
// whatever its other fields hold.
inline bool is_plain(const ProbeResult& result) {
  return result.fail_streak == 0 && !result.recovered && result.unanswered_since_ms == 0;
}

struct PlainRun {
  std::uint32_t first_target = 0;
  std::uint32_t count = 0;  // targets first_target .. first_target + count - 1
};

struct ViewDigest {
  std::uint32_t origin = 0;          // the observer (ObservedReport::origin)
  std::vector<PlainRun> plain;       // the plain counted results, ascending
  std::vector<ProbeResult> other;    // the other counted results, ascending
  std::vector<std::uint32_t> plain_in_country;  // by country of the fleet: plain results
};

// The digest of `observed`'s view as counted against `params` and `fleet`
// (for_each_counted_result with fleet.server_count).
ViewDigest digest_view(const ObservedReport& observed, const Parameters& params, const Fleet& fleet);

}  // namespace mesh::verdict

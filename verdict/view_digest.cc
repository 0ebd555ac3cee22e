#include "verdict/view_digest.h"

namespace mesh::verdict {

ViewDigest digest_view(const ObservedReport& observed, const Parameters& params, const Fleet& fleet) {
  ViewDigest digest;
  digest.origin = observed.origin;
  const std::size_t countries = fleet.countries.size();
  digest.plain_in_country.assign(countries, 0);
  // A closed run adds its servers per country: by the fleet's prefix
  // counts when it is long, one by one when it is short.
  auto close = [&](std::uint32_t first, std::uint32_t count) {
    digest.plain.push_back(PlainRun{first, count});
    std::uint32_t* const in_country = digest.plain_in_country.data();
    if (count <= countries) {
      for (std::uint32_t t = first; t < first + count; ++t) ++in_country[fleet.country_of[t]];
      return;
    }
    const std::uint32_t* const below_first = &fleet.country_below[first * countries];
    const std::uint32_t* const below_end = &fleet.country_below[(first + count) * countries];
    for (std::size_t c = 0; c < countries; ++c) in_country[c] += below_end[c] - below_first[c];
  };
  // The open run in locals: the pass below only compares and counts.
  std::uint32_t run_first = 0;
  std::uint32_t run_count = 0;
  for_each_counted_result(observed, params, fleet.server_count, [&](const ProbeResult& result) {
    if (!is_plain(result)) {
      digest.other.push_back(result);
      return;
    }
    if (run_count != 0 && run_first + run_count == result.target) {
      ++run_count;
      return;
    }
    if (run_count != 0) close(run_first, run_count);
    run_first = result.target;
    run_count = 1;
  });
  if (run_count != 0) close(run_first, run_count);
  return digest;
}

}  // namespace mesh::verdict

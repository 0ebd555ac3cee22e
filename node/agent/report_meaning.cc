#include "node/agent/report_meaning.h"

#include <algorithm>

namespace mesh::agent {

ReportMeaning meaning_of(const SelfCheck& self_check, const ProbeView& view, std::uint64_t epoch,
                         std::span<const std::uint32_t> assigned, std::uint32_t fail_streak) {
  ReportMeaning meaning;
  meaning.roster_version = view.roster_version;
  meaning.epoch = epoch;
  meaning.listener_ok = self_check.listener_ok;
  meaning.service_ok = self_check.service_ok;
  if (!self_check.listener_ok || !self_check.service_ok) meaning.reason = self_check.reason;
  for (const ProbeResult& result : view.results) {
    if (std::binary_search(assigned.begin(), assigned.end(), result.target)) {
      meaning.present.push_back(result.target);
    }
    if (result.recovered) meaning.recovered.push_back(result.target);
    if (result.fail_streak == 0) continue;
    const ResultClass result_class = class_of(result.fail_streak, fail_streak);
    meaning.failing.push_back(TargetMeaning{result.target, result_class, result.reason,
                                            result_class == ResultClass::failing &&
                                                result.unanswered_since_ms == 0});
  }
  return meaning;
}

}  // namespace mesh::agent

#include "tools/meshctl/read_command.h"

#include <cstdio>

namespace mesh::ctl {

int run_read_command(std::string_view command, const ReadOptions& options, const Fetch& fetch,
                     const Print& print) {
  auto source = open_source(options.source);
  if (!source) return report_failure(command, source.error());
  auto answer = fetch(**source);
  if (!answer) return report_failure(command, answer.error());
  if (options.json) {
    print_json(*answer);
    return kExitOk;
  }
  try {
    print(*answer, **source, output_style(options.no_color));
  } catch (const nlohmann::json::exception& e) {
    std::fflush(stdout);
    return report_failure(command, unusable(std::string("the answer is not the documented layout: ") + e.what()));
  }
  return kExitOk;
}

}  // namespace mesh::ctl

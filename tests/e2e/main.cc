// The end-to-end suite's entry point: skips (exit 77, which ctest reports
// as skipped, with the reason printed) where network namespaces cannot be
// made; otherwise moves into a private network namespace, runs the
// scenarios in order and prints the summary table.
#define DOCTEST_CONFIG_IMPLEMENT
#include <doctest/doctest.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <iostream>

#include "tests/e2e/netns.h"
#include "tests/e2e/suite.h"

int main(int argc, char** argv) {
  using namespace mesh::test::e2e;
  if (auto why = why_no_namespaces()) {
    std::cout << "e2e: SKIPPED: " << *why << std::endl;
    return 77;
  }
  if (!enter_private_network()) {
    std::cout << "e2e: SKIPPED: cannot make a network namespace (unshare: " << std::strerror(errno)
              << ")" << std::endl;
    return 77;
  }
  doctest::Context context(argc, argv);
  const int failed = context.run();
  const char* json = std::getenv("MESHNODE_E2E_SUMMARY");
  if (!context.shouldExit()) print_summary(json != nullptr ? json : "e2e-summary.json");
  end_suite();
  return failed;
}

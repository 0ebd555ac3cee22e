#include "common/check.h"

#include <cstdio>
#include <cstdlib>

namespace mesh {

void check_failed(const char* expression, const char* message, const char* file, int line) {
  std::fprintf(stderr, "meshnode: invariant broken at %s:%d: %s (%s)\n", file, line, message,
               expression);
  std::fflush(stderr);
  std::abort();
}

}  // namespace mesh

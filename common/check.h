// Always-on invariant checks. A broken invariant is a bug: log and abort,
// in every build type (never compiled out like assert()).
#pragma once

namespace mesh {
[[noreturn]] void check_failed(const char* expression, const char* message, const char* file,
                               int line);
}  // namespace mesh

#define MESH_CHECK(condition, message)                                    \
  do {                                                                    \
    if (!(condition)) ::mesh::check_failed(#condition, message, __FILE__, __LINE__); \
  } while (0)

// Records the largest single allocation made through operator new, so a
// test can prove that an announced length never became an allocation of
// that size. Linking allocation_probe.cc replaces the global operator new
// and delete of the whole test program.
#pragma once

#include <cstddef>

namespace mesh::node::test {

// The largest operator new request since the last reset.
std::size_t largest_allocation();
void reset_largest_allocation();

}  // namespace mesh::node::test

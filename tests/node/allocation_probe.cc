// Replacement global operator new/delete that record the largest request
// (tests/node/allocation_probe.h). Kept in a file of its own: g++ warns
// (-Wmismatched-new-delete) where it can inline them into their callers.
#include "tests/node/allocation_probe.h"

#include <atomic>
#include <cstdlib>
#include <new>

namespace {
std::atomic<std::size_t> g_largest_allocation{0};
}  // namespace

namespace mesh::node::test {
std::size_t largest_allocation() { return g_largest_allocation.load(); }
void reset_largest_allocation() { g_largest_allocation = 0; }
}  // namespace mesh::node::test

void* operator new(std::size_t size) {
  std::size_t seen = g_largest_allocation.load(std::memory_order_relaxed);
  while (size > seen && !g_largest_allocation.compare_exchange_weak(seen, size)) {
  }
  if (void* memory = std::malloc(size == 0 ? 1 : size)) return memory;
  throw std::bad_alloc();
}
void operator delete(void* memory) noexcept { std::free(memory); }
void operator delete(void* memory, std::size_t) noexcept { std::free(memory); }

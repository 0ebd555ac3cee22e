// Notes printed only when the test case that made them fails: a fleet of
// daemons keeps the tail of each node's log here as it is torn down, so
// that a timing failure in CI (the sanitized fleets on 2 cores) can be
// read, not inferred, although its temporary directory is gone.
#pragma once

#include <string>

namespace mesh::test {

// Keeps `text` under `title` until the current test case ends; printed to
// standard error then if it failed. A test case keeps at most the last
// 64 KiB of notes.
void keep_for_failure(const std::string& title, const std::string& text);

// The last `lines` lines of `text`.
std::string last_lines(const std::string& text, std::size_t lines);

}  // namespace mesh::test

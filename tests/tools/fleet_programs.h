// What the fleet tests (tests/node/daemon_fleet.h, tests/e2e/fleet.h) share:
// the programs they start, from the build tree, the countries their nodes
// take in turn, and writing a whole file. Header-only; the including target
// defines MESHNODE_BINARY_DIR.
#pragma once

#include <fstream>
#include <string>

namespace mesh::test {

inline const std::string kMeshnodeProgram = MESHNODE_BINARY_DIR "/node/meshnode";
inline const std::string kStandinProgram = MESHNODE_BINARY_DIR "/tools/standin/meshnode-standin";
inline const char* const kFleetCountries[] = {"DE", "NL", "FI"};

// Writes `text` to `path`, replacing it; false when that failed.
inline bool write_text_file(const std::string& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << text;
  return out.good();
}

}  // namespace mesh::test

// The committed vectors are what the code makes today: runs make_vectors
// (tests/vectors/make_vectors.cc) as a program and compares its output,
// byte for byte, with every committed file. A default parameter, a
// format or a generator that moved shows here, with the first line that
// differs, instead of leaving the files to drift from the code.
#include <doctest/doctest.h>

#include <fstream>
#include <iterator>
#include <sstream>
#include <string>

#include "tests/tools/run_process.h"

namespace mesh::test {
namespace {

std::string committed(const std::string& name) {
  std::ifstream in(std::string(MESHNODE_SOURCE_DIR) + "/tests/vectors/" + name);
  REQUIRE_MESSAGE(in.good(), "cannot read tests/vectors/" << name);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

// "" when equal; otherwise the first line that differs, from both sides.
std::string first_difference(const std::string& want, const std::string& got) {
  if (want == got) return "";
  std::istringstream a(want), b(got);
  std::string line_a, line_b;
  for (int line = 1;; ++line) {
    const bool more_a = static_cast<bool>(std::getline(a, line_a));
    const bool more_b = static_cast<bool>(std::getline(b, line_b));
    if (!more_a && !more_b) return "the files differ in their last newline";
    if (!more_a || !more_b || line_a != line_b) {
      return "line " + std::to_string(line) + ":\n  committed: " + (more_a ? line_a : "(end of file)") +
             "\n  generated: " + (more_b ? line_b : "(end of file)");
    }
  }
}

void check_reproduced(const std::string& which, const std::string& file) {
  const ProcessResult made = run_process({MAKE_VECTORS_PATH, which});
  REQUIRE_MESSAGE(made.exit_code == 0, "make_vectors " << which << " failed: " << made.err);
  const std::string difference = first_difference(committed(file), made.out);
  INFO("tests/vectors/" << file << " is not what `make_vectors " << which << "` makes now, at "
                        << difference << "\nA deliberate change: regenerate it (tests/vectors/make_vectors.cc says how) "
                        << "and say why in docs/PROTOCOL.md.");
  CHECK(difference.empty());
}

TEST_CASE("make_vectors reproduces tests/vectors/records.json byte for byte") {
  check_reproduced("records", "records.json");
}

TEST_CASE("make_vectors reproduces tests/vectors/gossip.json byte for byte") {
  check_reproduced("gossip", "gossip.json");
}

TEST_CASE("the comparison itself finds a changed line") {
  CHECK(first_difference("a\nb\n", "a\nb\n").empty());
  CHECK(first_difference("a\nb\n", "a\nc\n").find("line 2") != std::string::npos);
  CHECK(first_difference("a\n", "a\nb\n").find("(end of file)") != std::string::npos);
  CHECK(!first_difference("a\n", "a").empty());
}

}  // namespace
}  // namespace mesh::test

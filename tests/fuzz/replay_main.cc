// fuzz_replay DIR [TARGET...]: runs each fuzz target's LLVMFuzzerTestOneInput
// over every file in DIR/corpus/<target>/ and DIR/regressions/<target>/, in
// name order. A broken property or a sanitizer report aborts with the file's
// name printed just before; a target without any corpus file fails too.
// This is the ctest entry fuzz_corpus_replay, built with g++ in every build.
#include <algorithm>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <memory>
#include <string>
#include <vector>

#include "tests/fuzz/replay.h"

namespace {

namespace fs = std::filesystem;

std::vector<fs::path> files_in(const fs::path& dir) {
  std::vector<fs::path> files;
  std::error_code error;
  if (!fs::is_directory(dir, error)) return files;
  for (const auto& entry : fs::directory_iterator(dir)) {
    if (entry.is_regular_file()) files.push_back(entry.path());
  }
  std::sort(files.begin(), files.end());
  return files;
}

std::vector<std::uint8_t> read_file(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  return std::vector<std::uint8_t>(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

// Returns the number of corpus files run.
std::size_t replay(const mesh::fuzz::Target& target, const fs::path& root) {
  std::size_t corpus = 0;
  std::size_t regressions = 0;
  for (const char* kind : {"corpus", "regressions"}) {
    for (const fs::path& file : files_in(root / kind / target.name)) {
      std::fprintf(stderr, "%s: %s\n", target.name, file.c_str());
      const std::vector<std::uint8_t> bytes = read_file(file);
      // A copy of exactly the file's size, so ASan sees a read past its end.
      std::unique_ptr<std::uint8_t[]> exact(new std::uint8_t[bytes.size()]);
      std::copy(bytes.begin(), bytes.end(), exact.get());
      target.run(exact.get(), bytes.size());
      ++(std::strcmp(kind, "corpus") == 0 ? corpus : regressions);
    }
  }
  std::printf("%-15s %5zu corpus files, %3zu regressions: ok\n", target.name, corpus, regressions);
  return corpus;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: fuzz_replay TESTS_FUZZ_DIR [TARGET...]\n");
    return 2;
  }
  const fs::path root = argv[1];
  int failed = 0;
  for (const auto& target : mesh::fuzz::kTargets) {
    if (argc > 2 && std::find_if(argv + 2, argv + argc, [&](const char* name) {
                      return std::strcmp(name, target.name) == 0;
                    }) == argv + argc) {
      continue;
    }
    if (replay(target, root) == 0) {
      std::fprintf(stderr, "%s: no corpus files in %s\n", target.name,
                   (root / "corpus" / target.name).c_str());
      ++failed;
    }
  }
  return failed == 0 ? 0 : 1;
}

#include "tests/tools/run_process.h"

#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <sstream>
#include <stdexcept>

#include "tests/tools/spawn_child.h"

namespace mesh::test {
namespace {

std::string slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

}  // namespace

ProcessResult run_process(const std::vector<std::string>& argv) {
  TempDir io;
  std::string out_path = io.file("out");
  std::string err_path = io.file("err");
  pid_t pid = spawn_child(argv, out_path, err_path, /*append=*/false);
  int status = 0;
  while (waitpid(pid, &status, 0) < 0) {
  }
  ProcessResult result;
  result.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  result.out = slurp(out_path);
  result.err = slurp(err_path);
  return result;
}

TempDir::TempDir() {
  char pattern[] = "/tmp/meshnode-test-XXXXXX";
  if (mkdtemp(pattern) == nullptr) throw std::runtime_error("mkdtemp failed");
  path_ = pattern;
}

TempDir::~TempDir() {
  // MESHNODE_KEEP_TEST_DIRS=1 keeps them (logs of a run by hand, such as
  // tests/panels/alert_soak's, for the post-mortem).
  if (const char* keep = std::getenv("MESHNODE_KEEP_TEST_DIRS"); keep != nullptr && *keep != 0) return;
  std::error_code ignored;
  std::filesystem::remove_all(path_, ignored);
}

std::string on_path(const std::string& program) {
  const char* path = std::getenv("PATH");
  std::stringstream dirs(path ? path : "/usr/bin:/bin");
  for (std::string dir; std::getline(dirs, dir, ':');) {
    const std::string candidate = (dir.empty() ? "." : dir) + "/" + program;
    if (::access(candidate.c_str(), X_OK) == 0) return std::filesystem::absolute(candidate).string();
  }
  return "";
}

std::string read_text(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

}  // namespace mesh::test

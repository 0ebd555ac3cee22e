// Runs a program as a child process and collects its exit code and output.
#pragma once

#include <string>
#include <vector>

namespace mesh::test {

struct ProcessResult {
  int exit_code = -1;  // -1 when it did not exit normally
  std::string out;
  std::string err;
};

// Runs `argv` (argv[0] is the program path) with no stdin; waits for it.
ProcessResult run_process(const std::vector<std::string>& argv);

// The absolute path of `program` on PATH; "" when it is not there.
std::string on_path(const std::string& program);
// The whole file at `path`; "" when it cannot be read.
std::string read_text(const std::string& path);

// A fresh directory under /tmp, removed with everything in it on destruction.
class TempDir {
 public:
  TempDir();
  ~TempDir();
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const std::string& path() const { return path_; }
  std::string file(const std::string& name) const { return path_ + "/" + name; }

 private:
  std::string path_;
};

}  // namespace mesh::test

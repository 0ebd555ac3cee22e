#include "node/process_scan.h"

#include <dirent.h>

#include <memory>

#include "node/text_file.h"

namespace mesh::node {
namespace {

constexpr std::size_t kCommBytesMax = 64;       // the kernel writes ≤ 16
constexpr std::size_t kCmdlineBytesMax = 4096;  // enough for argv[0]

bool is_pid(const char* entry) {
  if (*entry == '\0') return false;
  for (; *entry != '\0'; ++entry) {
    if (*entry < '0' || *entry > '9') return false;
  }
  return true;
}

}  // namespace

bool process_matches(std::string_view name, std::string_view comm, std::string_view cmdline) {
  if (name.empty()) return false;
  if (!comm.empty() && comm.back() == '\n') comm.remove_suffix(1);
  if (comm == name) return true;
  const std::string_view argv0 = cmdline.substr(0, cmdline.find('\0'));
  if (argv0 == name) return true;
  return argv0.size() > name.size() && argv0.ends_with(name) &&
         argv0[argv0.size() - name.size() - 1] == '/';
}

bool process_running(std::string_view name, const std::string& proc_root) {
  const std::unique_ptr<DIR, int (*)(DIR*)> dir(::opendir(proc_root.c_str()), ::closedir);
  if (!dir) return false;
  std::size_t examined = 0;
  while (const dirent* entry = ::readdir(dir.get())) {
    if (++examined > kProcessScanEntriesMax) break;
    if (!is_pid(entry->d_name)) continue;
    const std::string base = proc_root + "/" + entry->d_name;
    // A process that exits mid-scan reads as "" and simply does not match.
    const std::string comm = read_text_file(base + "/comm", kCommBytesMax);
    const std::string cmdline = read_text_file(base + "/cmdline", kCmdlineBytesMax);
    if (process_matches(name, comm, cmdline)) return true;
  }
  return false;
}

}  // namespace mesh::node

#include "tests/tools/failure_notes.h"

#include <doctest/doctest.h>

#include <cstddef>
#include <deque>
#include <iostream>
#include <mutex>
#include <utility>

namespace mesh::test {
namespace {

constexpr std::size_t kNotesBytesMax = 64 * 1024;

struct Notes {
  std::mutex mutex;
  std::deque<std::pair<std::string, std::string>> kept;
  std::size_t bytes = 0;
};

Notes& notes() {
  static Notes instance;
  return instance;
}

// A doctest listener: clears the notes when a test case starts and prints
// them when it ends failed.
struct FailureNotesListener : doctest::IReporter {
  explicit FailureNotesListener(const doctest::ContextOptions&) {}
  void report_query(const doctest::QueryData&) override {}
  void test_run_start() override {}
  void test_run_end(const doctest::TestRunStats&) override {}
  void test_case_start(const doctest::TestCaseData&) override {
    std::lock_guard lock(notes().mutex);
    notes().kept.clear();
    notes().bytes = 0;
  }
  void test_case_reenter(const doctest::TestCaseData&) override {}
  void test_case_end(const doctest::CurrentTestCaseStats& stats) override {
    std::lock_guard lock(notes().mutex);
    if (stats.testCaseSuccess || notes().kept.empty()) return;
    std::cerr << "==== what the failed test case's daemons logged last ====\n";
    for (const auto& [title, text] : notes().kept) {
      std::cerr << "---- " << title << " ----\n" << text << (text.empty() || text.back() == '\n' ? "" : "\n");
    }
    std::cerr << "==== end of the daemons' logs ====" << std::endl;
  }
  void test_case_exception(const doctest::TestCaseException&) override {}
  void subcase_start(const doctest::SubcaseSignature&) override {}
  void subcase_end() override {}
  void log_assert(const doctest::AssertData&) override {}
  void log_message(const doctest::MessageData&) override {}
  void test_case_skipped(const doctest::TestCaseData&) override {}
};

REGISTER_LISTENER("failure_notes", 1, FailureNotesListener);

}  // namespace

void keep_for_failure(const std::string& title, const std::string& text) {
  std::lock_guard lock(notes().mutex);
  Notes& n = notes();
  n.kept.emplace_back(title, text);
  n.bytes += title.size() + text.size();
  while (n.bytes > kNotesBytesMax && n.kept.size() > 1) {
    n.bytes -= n.kept.front().first.size() + n.kept.front().second.size();
    n.kept.pop_front();
  }
}

std::string last_lines(const std::string& text, std::size_t lines) {
  std::size_t at = text.size();
  if (at > 0 && text[at - 1] == '\n') --at;
  for (std::size_t seen = 0; at > 0; --at) {
    if (text[at - 1] == '\n' && ++seen == lines) break;
  }
  return text.substr(at);
}

}  // namespace mesh::test

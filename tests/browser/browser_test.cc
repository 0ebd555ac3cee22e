// The status page (node/api/status_page.html) in a real browser against a
// fleet of real daemons (tests/node/daemon_fleet.h): once the fleet sees one
// server unreachable, page_test.mjs drives Debian's Chromium through
// playwright-core and checks what the page shows against what the API says.
// Where the browser cannot run (no Chromium, no Node.js 18 or newer, no
// playwright-core and no npm registry to install it from) the program says
// why and exits 77, which ctest reports as skipped (SKIP_RETURN_CODE).
#include <doctest/doctest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>

#include <nlohmann/json.hpp>

#include "tests/node/daemon_fleet.h"
#include "tests/node/spawned_process.h"
#include "tests/tools/run_process.h"

namespace mesh::test {
namespace {

using std::chrono::seconds;
using Json = nlohmann::json;

constexpr int kSkipExitCode = 77;  // tests/browser/CMakeLists.txt: SKIP_RETURN_CODE
constexpr int kNodeMajorMin = 18;  // Debian 12's nodejs; package.json's pin runs on it
// This build folder: package.json and page_test.mjs (copied at configure
// time), node_modules/ (npm), the screenshots.
const std::string kBrowserDir = MESHNODE_BROWSER_DIR;

[[noreturn]] void skip(const std::string& reason) {
  std::cout << "SKIPPED browser_test: " << reason << std::endl;
  std::exit(kSkipExitCode);
}

struct Finished {
  bool exited = false;  // false: killed at the limit, or ended by a signal
  int code = -1;
  std::string output;  // stdout and stderr together
};

// Runs `argv` with its output in `log`, killed when it runs past `limit`.
Finished run_bounded(const std::vector<std::string>& argv, const std::string& log,
                     std::chrono::milliseconds limit) {
  std::filesystem::remove(log);
  Finished done;
  {
    SpawnedProcess process(argv, log, log);
    const auto status = process.wait_exit(limit);
    if (status && WIFEXITED(*status)) {
      done.exited = true;
      done.code = WEXITSTATUS(*status);
    }
  }
  done.output = read_text(log);
  return done;
}

std::string tail(const std::string& text, std::size_t bytes = 1500) {
  return text.size() <= bytes ? text : "..." + text.substr(text.size() - bytes);
}

std::string json_string(const std::string& path, const Json::json_pointer& at) {
  const Json json = Json::parse(read_text(path), nullptr, false);
  return !json.is_discarded() && json.contains(at) && json.at(at).is_string() ? json.at(at).get<std::string>() : "";
}

// Installs the pinned playwright-core into kBrowserDir when it is missing
// or at another version; returns "" when it is in place, else why not.
std::string ensure_playwright() {
  const std::string pinned = json_string(kBrowserDir + "/package.json", Json::json_pointer("/dependencies/playwright-core"));
  const std::string installed_json = kBrowserDir + "/node_modules/playwright-core/package.json";
  if (pinned.empty()) return "no playwright-core pin in " + kBrowserDir + "/package.json";
  if (json_string(installed_json, Json::json_pointer("/version")) == pinned) return "";
  const std::string npm = on_path("npm");
  if (npm.empty()) return "npm is not installed (Debian: apt-get install npm)";
  std::cout << "installing playwright-core " << pinned << " into " << kBrowserDir << std::endl;
  const Finished install = run_bounded(
      {npm, "install", "--no-audit", "--no-fund", "--fetch-retries=1", "--fetch-timeout=30000",
       "--prefix", kBrowserDir},
      kBrowserDir + "/npm-install.log", seconds(150));
  if (!install.exited || install.code != 0) {
    return "npm install of playwright-core " + pinned + " failed (is the npm registry reachable?):\n" +
           tail(install.output);
  }
  const std::string got = json_string(installed_json, Json::json_pointer("/version"));
  return got == pinned ? "" : "npm installed playwright-core '" + got + "', not " + pinned;
}

struct Browser {
  std::string node;
  std::string chromium;
};

// What page_test.mjs needs, or a skip that says what is missing.
Browser find_browser() {
  Browser browser;
  const char* chromium = std::getenv("MESHNODE_CHROMIUM");
  browser.chromium = chromium && *chromium ? chromium : "/usr/bin/chromium";
  if (::access(browser.chromium.c_str(), X_OK) != 0) {
    skip("no Chromium at " + browser.chromium + " (Debian: apt-get install chromium; or set MESHNODE_CHROMIUM)");
  }
  browser.node = on_path("node");
  if (browser.node.empty()) skip("node is not installed (Debian: apt-get install nodejs npm)");
  const Finished version = run_bounded({browser.node, "--version"}, kBrowserDir + "/node-version.log", seconds(20));
  const int major = version.output.size() > 1 ? std::atoi(version.output.c_str() + 1) : 0;  // "v18.20.4"
  if (!version.exited || major < kNodeMajorMin) {
    skip("Node.js " + std::to_string(kNodeMajorMin) + " or newer is needed; " + browser.node + " says '" +
         version.output + "'");
  }
  if (auto missing = ensure_playwright(); !missing.empty()) skip(missing);
  return browser;
}

bool every_server_ok(const DaemonFleet& fleet) {
  for (std::uint32_t i = 0; i < fleet.size(); ++i) {
    if (!fleet.all_show(fleet.everyone(), fleet.id(i), "ok")) return false;
  }
  return true;
}

Finished run_page_test(const Browser& browser, const Json& expectations, const std::string& log) {
  const Finished run = run_bounded({browser.node, kBrowserDir + "/page_test.mjs", expectations.dump()},
                                   kBrowserDir + "/" + log, seconds(170));
  std::cout << run.output << std::flush;
  return run;
}

TEST_CASE("the status page in Chromium: every dot, captions, the summary, the matrix, a refused token, a wall screen, a server down") {
  const Browser browser = find_browser();
  // Subnet 81: no other test program's fleet (ctest runs them side by side).
  DaemonFleet fleet(4, 81);  // n1 DE, n2 NL, n3 FI, n4 DE
  fleet.start_all();
  INFO("logs in " << fleet.dir());
  REQUIRE(DaemonFleet::wait([&] { return every_server_ok(fleet); }, seconds(60)));

  // n1's listener resets n2's and n3's TLS handshakes, like a DPI block:
  // 2 of its 3 witnesses fail it, a quorum (fast_parameters: 2).
  fleet.write_block_file(0, "reset " + fleet.address(1) + "\nreset " + fleet.address(2) + "\n");
  REQUIRE(DaemonFleet::wait([&] { return fleet.all_show(fleet.everyone(), "n1", "unreachable"); },
                            seconds(60)));

  std::vector<std::string> servers;
  for (std::uint32_t i = 0; i < fleet.size(); ++i) servers.push_back(fleet.id(i));
  const std::string url = "http://" + fleet.address(3) + ":" + std::to_string(fleet.api_port()) + "/";
  const Json expectations = {
      {"phase", "block"},
      {"url", url},
      {"token", fleet.read_token()},
      {"wrong_token", "not-a-token-of-this-fleet"},
      {"chromium", browser.chromium},
      {"servers", servers},
      {"unreachable", "n1"},
      {"failing_observers", {"n2", "n3"}},
      {"reaching_observers", {"n4"}},
      {"caption", "Unreachable from your servers (2 of 3 servers can't see it)"},
      {"summary", "3 of 4 servers in rotation; n1 unreachable from your servers"},
      {"screenshot", kBrowserDir + "/status_page.png"},
      {"phone_screenshot", kBrowserDir + "/status_page_phone.png"},
      // Emptied by the page test once it has checked the block: the page
      // must then show n1 back in service by itself, without a reload.
      {"block_file", fleet.dir() + "/" + fleet.id(0) + "/blocks"},
      {"timeout_ms", 150'000},
  };
  const Finished run = run_page_test(browser, expectations, "page_test.log");
  CHECK_MESSAGE(run.exited, "page_test.mjs did not finish within its limit");
  CHECK_MESSAGE(run.code == 0, "page_test.mjs failed (its output is above)");

  // n3 powered off: its daemon and its listener stopped. No report, and
  // every witness fails it: unreachable and no_data, which the page
  // captions "Down", its last report's data greyed and marked stale.
  fleet.kill_daemon(2);
  fleet.stop_listener(2);
  REQUIRE(DaemonFleet::wait([&] { return fleet.all_show({0, 1, 3}, "n3", "unreachable"); }, seconds(60)));
  const Json down = {
      {"phase", "down"},
      {"url", url},
      {"token", fleet.read_token()},
      {"chromium", browser.chromium},
      {"servers", servers},
      {"down", "n3"},
      {"summary", "3 of 4 servers in rotation; n3 down"},
      {"screenshot", kBrowserDir + "/status_page_down.png"},
      {"timeout_ms", 90'000},
  };
  const Finished wall = run_page_test(browser, down, "page_test_down.log");
  CHECK_MESSAGE(wall.exited, "page_test.mjs (down) did not finish within its limit");
  CHECK_MESSAGE(wall.code == 0, "page_test.mjs (down) failed (its output is above)");
}

}  // namespace
}  // namespace mesh::test

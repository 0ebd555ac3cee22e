#include "tests/panels/stub_process.h"

#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>

#include "tests/node/http_client.h"
#include "tests/node/net_util.h"
#include "tests/tools/run_process.h"

namespace mesh::test {
namespace {

using Json = nlohmann::json;
const std::string kStubDir = MESHNODE_PANELS_DIR;  // package.json, its lock and stub.mjs, copied at configure time
constexpr int kSkipExitCode = 77;

[[noreturn]] void skip(const std::string& reason) {
  std::cout << "SKIPPED: " << reason << std::endl;
  std::exit(kSkipExitCode);
}

bool installed() {
  const Json json = Json::parse(read_text(kStubDir + "/node_modules/@remnawave/backend-contract/package.json"),
                                nullptr, false);
  const Json sdk = Json::parse(read_text(kStubDir + "/node_modules/marzban-sdk/package.json"), nullptr, false);
  return !json.is_discarded() && json.value("version", "") == "3.4.15" && !sdk.is_discarded() &&
         sdk.value("version", "") == "1.5.5";
}

}  // namespace

void require_stub_packages() {
  if (on_path("node").empty()) skip("node is not installed (Debian: apt-get install nodejs npm)");
  if (installed()) return;
  const std::string npm = on_path("npm");
  if (npm.empty()) skip("npm is not installed (Debian: apt-get install npm)");
  std::cout << "installing the stubs' packages into " << kStubDir << std::endl;
  const std::string log = kStubDir + "/npm-ci.log";
  std::filesystem::remove(log);
  {
    SpawnedProcess install({npm, "ci", "--prefer-offline", "--ignore-scripts", "--no-audit", "--no-fund",
                            "--fetch-retries=1", "--fetch-timeout=30000", "--prefix", kStubDir},
                           log, log);
    if (!install.wait_exit(std::chrono::seconds(150))) skip("npm ci took over 150 s:\n" + read_text(log));
  }
  if (!installed()) skip("npm ci of tests/panels/package-lock.json failed (is the npm registry reachable?):\n" + read_text(log));
}

PanelStub::PanelStub(const std::string& kind, const std::string& address, const Json& hosts, const std::string& dir)
    : address_(address), port_(free_port(address)), log_(dir + "/stub-" + kind + ".log") {
  const std::string hosts_path = dir + "/hosts-" + kind + ".json";
  std::ofstream(hosts_path) << hosts.dump();
  process_ = std::make_unique<SpawnedProcess>(
      std::vector<std::string>{on_path("node"), kStubDir + "/stub.mjs", "--kind", kind, "--listen",
                               address + ":" + std::to_string(port_), "--hosts", hosts_path},
      log_, log_);
  if (!wait_for_port(address, port_, std::chrono::seconds(20))) {
    throw std::runtime_error("the " + kind + " stub did not start:\n" + read_text(log_));
  }
}

std::string PanelStub::url() const { return "http://" + address_ + ":" + std::to_string(port_); }

Json PanelStub::state() const {
  const auto answer = http_request(address_, port_, boost::beast::http::verb::get, "/_stub/state");
  return answer.status == 200 ? Json::parse(answer.body, nullptr, false) : Json(nullptr);
}

void PanelStub::set_mode(const std::string& mode) const {
  http_request(address_, port_, boost::beast::http::verb::post, "/_stub/mode", "", Json{{"mode", mode}}.dump());
}

void PanelStub::set_host(const std::string& id, bool enabled) const {
  http_request(address_, port_, boost::beast::http::verb::post, "/_stub/set", "",
               Json{{"id", id}, {"enabled", enabled}}.dump());
}

}  // namespace mesh::test

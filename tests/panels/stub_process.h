// The panel and receiver stand-ins of stub.mjs as processes of a test
// (tests/panels/README.md): installs their npm packages into this build
// folder on the first run (pinned by package-lock.json; offline once npm's
// cache holds them), starts one, reads its state. A test that cannot run
// them (no Node.js, no npm, no registry) exits 77, which ctest reports as
// skipped, saying why.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "tests/node/spawned_process.h"

namespace mesh::test {

// Exits 77 (skipped) with the reason when the stubs cannot run here.
void require_stub_packages();

class PanelStub {
 public:
  // kind: "remnawave", "marzban" or "receiver"; `hosts` for the panels:
  // [{"remark", "address", "port"[, "tag"]}].
  PanelStub(const std::string& kind, const std::string& address, const nlohmann::json& hosts,
            const std::string& dir);
  std::string url() const;  // http://address:port
  nlohmann::json state() const;  // GET /_stub/state; null when it does not answer
  void set_mode(const std::string& mode) const;  // ok, error, slow, down
  void set_host(const std::string& id, bool enabled) const;
  const std::string& log_path() const { return log_; }

 private:
  std::string address_;
  std::uint16_t port_ = 0;
  std::string log_;
  std::unique_ptr<SpawnedProcess> process_;
};

}  // namespace mesh::test

// The API's answers built from a node's store, read-only (docs/API.md
// shapes; docs/STORAGE.md for what is read): the verdicts are the
// daemon's stored snapshot (agent/verdicts), countries, routes and names
// come from the stored roster, and a server's metrics, self-check and
// observers from the stored reports, each decoded against that roster.
// meshctl computes no verdict: what it shows is what the daemon decided.
// Ages count from meshctl's clock when the source was opened.
#pragma once

#include <memory>
#include <optional>
#include <string>

#include "node/api/snapshot.h"
#include "tools/meshctl/inspect.h"
#include "tools/meshctl/source.h"

namespace mesh::ctl {

class StoreSource final : public NodeSource {
 public:
  // Opens the store in `data_dir` read-only and takes one snapshot of it.
  static CtlResult<std::unique_ptr<StoreSource>> open(const std::string& data_dir);

  CtlResult<nlohmann::json> servers(const ServerFilter& filter) override;
  CtlResult<nlohmann::json> routes(const std::string& country) override;
  CtlResult<nlohmann::json> server(const std::string& id) override;
  CtlResult<nlohmann::json> mesh() override;
  bool from_api() const override { return false; }

 private:
  StoreSource(std::string data_dir, StoreSnapshot snapshot, UnixMs now_ms);
  // The API snapshot of the stored roster, verdicts and reports, built on
  // first use. check_failed without a roster or verdicts (the daemon has
  // not evaluated yet), unusable for stored bytes that do not decode.
  CtlResult<const api::ApiSnapshot*> view();
  Status<Failure> build_view();
  void add_reports(api::ApiSnapshot& view);

  std::string data_dir_;
  StoreSnapshot snapshot_;
  UnixMs now_ms_ = 0;
  std::unique_ptr<api::ApiSnapshot> view_;
  std::optional<Error<Failure>> view_error_;
};

}  // namespace mesh::ctl

// A panel's hosts API, panel-neutral (docs/PANELS.md): read the hosts,
// enable and disable some in bulk. One implementation per panel kind,
// written from the panel's public contract (Remnawave:
// @remnawave/backend-contract; Marzban: marzban-sdk). Everything the panel
// answers is checked before use: a body that breaks the contract is an
// error, and then nothing is written. Runs on the panel worker's thread.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "common/result.h"
#include "node/panel/http_client.h"
#include "node/rotation/host_plan.h"

namespace mesh::panel {

enum class PanelError {
  transport,  // no answer (HttpError in the message)
  auth,       // 401/403, or the login failed
  status,     // any other status but 2xx
  contract,   // a body that breaks the panel's contract
  config,     // credentials unreadable or malformed
};
const char* to_string(PanelError error);

using HostsResult = Result<std::vector<rotation::PanelHost>, PanelError>;

class PanelClient {
 public:
  virtual ~PanelClient() = default;
  virtual const char* kind() const = 0;
  // Reads every host. `done` is called once, on the worker's thread.
  virtual void read_hosts(std::function<void(HostsResult)> done) = 0;
  // Enables `enable` and disables `disable` (host ids of the last
  // read_hosts), enables first. `done` is called once.
  virtual void apply(const std::vector<std::string>& enable, const std::vector<std::string>& disable,
                     std::function<void(Status<PanelError>)> done) = 0;
};

struct PanelClientSettings {
  std::string node;  // this node's id: every request says it (X-Meshnode-Node), for the panel's logs
  HttpUrl url;
  std::string credentials_file;
  DurationMs timeout_ms = 10'000;
};

// The panel's credentials, "key value" lines ('#' starts a comment):
// Remnawave `token T`; Marzban `token T`, or `username U` and `password P`.
struct Credentials {
  std::string token, username, password;
};
Result<Credentials, PanelError> read_credentials(const std::string& path);

std::unique_ptr<PanelClient> make_remnawave_client(boost::asio::io_context& io, PanelClientSettings settings);
std::unique_ptr<PanelClient> make_marzban_client(boost::asio::io_context& io, PanelClientSettings settings);

// Shared by the clients: the error for a response that is not 2xx.
Error<PanelError> status_error(const HttpResponse& response, const std::string& what);

}  // namespace mesh::panel

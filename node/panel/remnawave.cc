// Remnawave's hosts API, from @remnawave/backend-contract (3.4.15):
//   GET  /api/hosts/             GetHostsCommand: {"response": HostsSchema[]}
//   POST /api/hosts/bulk/enable  BulkEnableHostsCommand: {"uuids": uuid[]}
//   POST /api/hosts/bulk/disable BulkDisableHostsCommand: {"uuids": uuid[]}
// with `Authorization: Bearer <API token>`. Of a host meshnode reads uuid,
// remark, address, port and isDisabled, and checks their types as the
// contract's zod schema states them.
#include <boost/asio/io_context.hpp>

#include <nlohmann/json.hpp>

#include "node/panel/panel_client.h"

namespace mesh::panel {
namespace {

using Json = nlohmann::json;

constexpr const char* kHostsPath = "/api/hosts/";
constexpr const char* kEnablePath = "/api/hosts/bulk/enable";
constexpr const char* kDisablePath = "/api/hosts/bulk/disable";

bool is_uuid(const std::string& text) {
  if (text.size() != 36) return false;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const bool dash = i == 8 || i == 13 || i == 18 || i == 23;
    if (dash != (text[i] == '-')) return false;
    if (!dash && !std::isxdigit(static_cast<unsigned char>(text[i]))) return false;
  }
  return true;
}

HostsResult decode_hosts(const std::string& body) {
  const Json json = Json::parse(body, nullptr, false);
  if (json.is_discarded() || !json.is_object() || !json.contains("response") || !json["response"].is_array()) {
    return make_error(PanelError::contract, "GET /api/hosts/: not {\"response\": [...]}");
  }
  std::vector<rotation::PanelHost> hosts;
  for (const Json& host : json["response"]) {
    const bool typed = host.is_object() && host.contains("uuid") && host["uuid"].is_string() &&
                       host.contains("remark") && host["remark"].is_string() && host.contains("address") &&
                       host["address"].is_string() && host.contains("port") && host["port"].is_number_integer() &&
                       host.contains("isDisabled") && host["isDisabled"].is_boolean();
    if (!typed || !is_uuid(host["uuid"].get<std::string>())) {
      return make_error(PanelError::contract,
                        "GET /api/hosts/: host #" + std::to_string(hosts.size()) +
                            " lacks uuid, remark, address, port or isDisabled of the contract's types");
    }
    const std::int64_t port = host["port"].get<std::int64_t>();
    hosts.push_back(rotation::PanelHost{host["uuid"], host["remark"], host["address"],
                                        static_cast<std::uint32_t>(port < 0 || port > 65535 ? 0 : port),
                                        !host["isDisabled"].get<bool>()});
  }
  return hosts;
}

class RemnawaveClient final : public PanelClient {
 public:
  RemnawaveClient(boost::asio::io_context& io, PanelClientSettings settings)
      : io_(io), settings_(std::move(settings)) {}

  const char* kind() const override { return "remnawave"; }

  void read_hosts(std::function<void(HostsResult)> done) override {
    auto request = authorized("GET", kHostsPath);
    if (!request) return done(request.error());
    send_http(io_, settings_.url, std::move(request.value()), settings_.timeout_ms,
              [done = std::move(done)](HttpResult result) {
                if (!result) return done(make_error(PanelError::transport, result.message()));
                if (result->status / 100 != 2) return done(status_error(*result, "GET /api/hosts/"));
                done(decode_hosts(result->body));
              });
  }

  void apply(const std::vector<std::string>& enable, const std::vector<std::string>& disable,
             std::function<void(Status<PanelError>)> done) override {
    bulk(kEnablePath, enable, [this, disable, done = std::move(done)](Status<PanelError> enabled) mutable {
      if (!enabled) return done(enabled);
      bulk(kDisablePath, disable, std::move(done));
    });
  }

 private:
  Result<HttpRequest, PanelError> authorized(const char* method, const char* path) {
    auto credentials = read_credentials(settings_.credentials_file);  // re-read: a rotated token takes
    if (!credentials) return credentials.error();
    if (credentials->token.empty()) {
      return make_error(PanelError::config, "credentials file '" + settings_.credentials_file +
                                                "': Remnawave needs 'token <API token>'");
    }
    HttpRequest request;
    request.method = method;
    request.target = path;
    request.headers.emplace_back("Authorization", "Bearer " + credentials->token);
    request.headers.emplace_back("X-Meshnode-Node", settings_.node);
    return request;
  }

  void bulk(const char* path, const std::vector<std::string>& uuids, std::function<void(Status<PanelError>)> done) {
    if (uuids.empty()) return done(Ok{});
    auto request = authorized("POST", path);
    if (!request) return done(request.error());
    request->content_type = "application/json";
    request->body = Json{{"uuids", uuids}}.dump();
    send_http(io_, settings_.url, std::move(request.value()), settings_.timeout_ms,
              [path, done = std::move(done)](HttpResult result) {
                if (!result) return done(make_error(PanelError::transport, result.message()));
                if (result->status / 100 != 2) return done(status_error(*result, std::string("POST ") + path));
                done(Ok{});
              });
  }

  boost::asio::io_context& io_;
  PanelClientSettings settings_;
};

}  // namespace

std::unique_ptr<PanelClient> make_remnawave_client(boost::asio::io_context& io, PanelClientSettings settings) {
  return std::make_unique<RemnawaveClient>(io, std::move(settings));
}

}  // namespace mesh::panel

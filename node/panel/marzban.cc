// Marzban's hosts API, from marzban-sdk (1.5.5; its SystemApi and AdminApi):
//   POST /api/admin/token  form: grant_type=password, username, password
//                          -> {"access_token": ..., "token_type": "bearer"}
//   GET  /api/hosts        -> {inbound_tag: ProxyHost[]}
//   PUT  /api/hosts        {inbound_tag: ProxyHost[]}: replaces those inbounds' hosts
// with `Authorization: Bearer <token>`. A host's id here is
// "<inbound_tag>#<index>". Marzban has no bulk enable: meshnode sends back
// the inbounds it changes exactly as it read them, with only `is_disabled`
// flipped on the hosts of the plan, and no other inbound.
#include <boost/asio/io_context.hpp>

#include <nlohmann/json.hpp>

#include "common/percent_encoding.h"
#include "node/panel/panel_client.h"

namespace mesh::panel {
namespace {

using Json = nlohmann::json;

// ProxyHost as Marzban's API describes it: remark and address strings, port
// an integer or null, is_disabled a boolean, null or absent (false).
Result<std::vector<rotation::PanelHost>, std::string> decode_hosts(const Json& json) {
  if (!json.is_object()) return make_error(std::string(), "not {inbound_tag: [...]}");
  std::vector<rotation::PanelHost> hosts;
  for (const auto& [tag, list] : json.items()) {
    if (!list.is_array()) return make_error(std::string(), "inbound '" + tag + "' is not a list");
    for (std::size_t i = 0; i < list.size(); ++i) {
      const Json& host = list[i];
      const bool typed = host.is_object() && host.contains("remark") && host["remark"].is_string() &&
                         host.contains("address") && host["address"].is_string() &&
                         (!host.contains("port") || host["port"].is_null() || host["port"].is_number_integer()) &&
                         (!host.contains("is_disabled") || host["is_disabled"].is_null() ||
                          host["is_disabled"].is_boolean());
      if (!typed) return make_error(std::string(), "host " + tag + "#" + std::to_string(i) + " is not a ProxyHost");
      const std::int64_t port = host.contains("port") && host["port"].is_number_integer() ? host["port"].get<std::int64_t>() : 0;
      const bool disabled = host.contains("is_disabled") && host["is_disabled"].is_boolean() && host["is_disabled"].get<bool>();
      hosts.push_back(rotation::PanelHost{tag + "#" + std::to_string(i), host["remark"], host["address"],
                                          static_cast<std::uint32_t>(port < 0 || port > 65535 ? 0 : port), !disabled});
    }
  }
  return hosts;
}

class MarzbanClient final : public PanelClient {
 public:
  MarzbanClient(boost::asio::io_context& io, PanelClientSettings settings) : io_(io), settings_(std::move(settings)) {}

  const char* kind() const override { return "marzban"; }

  void read_hosts(std::function<void(HostsResult)> done) override {
    with_token([this, done = std::move(done)](Result<std::string, PanelError> token) mutable {
      if (!token) return done(token.error());
      HttpRequest request{"GET", "/api/hosts", {{"Authorization", "Bearer " + *token}, {"X-Meshnode-Node", settings_.node}}, "", ""};
      send_http(io_, settings_.url, std::move(request), settings_.timeout_ms,
                [this, done = std::move(done)](HttpResult result) {
                  if (!result) return done(make_error(PanelError::transport, result.message()));
                  if (result->status == 401) token_.clear();  // logged in again next round
                  if (result->status / 100 != 2) return done(status_error(*result, "GET /api/hosts"));
                  Json json = Json::parse(result->body, nullptr, false);
                  auto hosts = decode_hosts(json);
                  if (json.is_discarded() || !hosts) {
                    return done(make_error(PanelError::contract,
                                           "GET /api/hosts: " + (hosts ? std::string("not JSON") : hosts.message())));
                  }
                  read_ = std::move(json);
                  done(std::move(hosts.value()));
                });
    });
  }

  void apply(const std::vector<std::string>& enable, const std::vector<std::string>& disable,
             std::function<void(Status<PanelError>)> done) override {
    Json body = Json::object();
    // REQUIRES: ids of the last read_hosts (the plan is made from it).
    auto flip = [&](const std::string& id, bool disabled) {
      const auto hash = id.rfind('#');
      const std::string tag = id.substr(0, hash == std::string::npos ? 0 : hash);
      std::size_t index = 0;
      for (char c : id.substr(hash + 1)) index = index * 10 + static_cast<std::size_t>(c - '0');
      if (hash == std::string::npos || !read_.contains(tag) || index >= read_[tag].size()) return false;
      if (!body.contains(tag)) body[tag] = read_[tag];
      body[tag][index]["is_disabled"] = disabled;
      return true;
    };
    bool known = true;
    for (const std::string& id : enable) known = flip(id, false) && known;
    for (const std::string& id : disable) known = flip(id, true) && known;
    if (!known) return done(make_error(PanelError::contract, "a host of the plan is not among those read"));
    if (body.empty()) return done(Ok{});
    with_token([this, body = body.dump(), done = std::move(done)](Result<std::string, PanelError> token) mutable {
      if (!token) return done(token.error());
      HttpRequest request{"PUT", "/api/hosts", {{"Authorization", "Bearer " + *token}, {"X-Meshnode-Node", settings_.node}}, "application/json",
                          std::move(body)};
      send_http(io_, settings_.url, std::move(request), settings_.timeout_ms,
                [this, done = std::move(done)](HttpResult result) {
                  if (!result) return done(make_error(PanelError::transport, result.message()));
                  if (result->status == 401) token_.clear();
                  if (result->status / 100 != 2) return done(status_error(*result, "PUT /api/hosts"));
                  done(Ok{});
                });
    });
  }

 private:
  // The token of the credentials file, or one got by logging in with its
  // username and password (kept until the panel answers 401).
  void with_token(std::function<void(Result<std::string, PanelError>)> done) {
    auto credentials = read_credentials(settings_.credentials_file);
    if (!credentials) return done(credentials.error());
    if (!credentials->token.empty()) return done(credentials->token);
    if (!token_.empty()) return done(token_);
    if (credentials->username.empty() || credentials->password.empty()) {
      return done(make_error(PanelError::config, "credentials file '" + settings_.credentials_file +
                                                     "': Marzban needs 'token T', or 'username U' and 'password P'"));
    }
    HttpRequest login{"POST", "/api/admin/token", {{"X-Meshnode-Node", settings_.node}}, "application/x-www-form-urlencoded",
                      "grant_type=password&username=" + percent_encoded(credentials->username) +
                          "&password=" + percent_encoded(credentials->password)};
    send_http(io_, settings_.url, std::move(login), settings_.timeout_ms,
              [this, done = std::move(done)](HttpResult result) {
                if (!result) return done(make_error(PanelError::transport, result.message()));
                if (result->status / 100 != 2) {
                  auto error = status_error(*result, "POST /api/admin/token");
                  return done(make_error(PanelError::auth, error.message));
                }
                const Json json = Json::parse(result->body, nullptr, false);
                if (json.is_discarded() || !json.is_object() || !json.contains("access_token") ||
                    !json["access_token"].is_string() || json["access_token"].get<std::string>().empty()) {
                  return done(make_error(PanelError::contract, "POST /api/admin/token: no access_token"));
                }
                token_ = json["access_token"];
                done(token_);
              });
  }

  boost::asio::io_context& io_;
  PanelClientSettings settings_;
  std::string token_;
  Json read_;  // the hosts as last read, sent back with is_disabled flipped
};

}  // namespace

std::unique_ptr<PanelClient> make_marzban_client(boost::asio::io_context& io, PanelClientSettings settings) {
  return std::make_unique<MarzbanClient>(io, std::move(settings));
}

}  // namespace mesh::panel

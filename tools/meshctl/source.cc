// The API/store choice and the API side of it: GETs mapped to the
// documented answers, every HTTP error to a message and an exit code.
#include "tools/meshctl/source.h"

#include <cstdio>

#include "common/percent_encoding.h"
#include "tools/meshctl/api_client.h"
#include "tools/meshctl/inspect.h"
#include "tools/meshctl/output.h"
#include "tools/meshctl/store_source.h"

namespace mesh::ctl {
namespace {

constexpr std::size_t kTokenFileBytesMax = 64 * 1024;

// The bearer token: the first line of `path`, surrounding blanks removed.
CtlResult<std::string> read_token(const std::string& path) {
  std::string error;
  auto content = read_file(path, kTokenFileBytesMax, error);
  if (!content) return unusable("--token-file: " + error);
  std::string line(content->begin(), content->end());
  line = line.substr(0, line.find('\n'));
  const auto first = line.find_first_not_of(" \t\r");
  const auto last = line.find_last_not_of(" \t\r");
  line = first == std::string::npos ? "" : line.substr(first, last - first + 1);
  if (line.empty()) return unusable("--token-file '" + path + "': its first line holds no token");
  for (unsigned char c : line) {
    if (c < 0x20 || c == 0x7f) {
      return unusable("--token-file '" + path + "': the token holds a control character");
    }
  }
  return line;
}

// "?status=ok&route=eu": the filter as a query; "" without one.
std::string query_of(const ServerFilter& filter) {
  std::string query;
  const std::pair<const char*, const std::string*> fields[] = {
      {"status", &filter.status}, {"country", &filter.country}, {"route", &filter.route}};
  for (const auto& [name, value] : fields) {
    if (value->empty()) continue;
    query += (query.empty() ? "?" : "&") + std::string(name) + "=" + percent_encoded(*value);
  }
  return query;
}

class ApiSource final : public NodeSource {
 public:
  ApiSource(ApiClientOptions client, std::string token_file)
      : client_(std::move(client)), token_file_(std::move(token_file)) {}

  CtlResult<nlohmann::json> servers(const ServerFilter& filter) override {
    return get("/v1/servers" + query_of(filter));
  }
  CtlResult<nlohmann::json> routes(const std::string& country) override {
    return get(country.empty() ? "/v1/routes" : "/v1/routes?country=" + percent_encoded(country));
  }
  CtlResult<nlohmann::json> server(const std::string& id) override {
    return get("/v1/servers/" + percent_encoded(id));
  }
  CtlResult<nlohmann::json> mesh() override { return get("/v1/mesh"); }
  bool from_api() const override { return true; }

 private:
  // One GET; a 200 with a JSON body is the answer, anything else a failure.
  CtlResult<nlohmann::json> get(const std::string& target) {
    auto answer = http_get(client_, target);
    if (!answer) return answer.error();
    const std::string where = client_.url.base + target + ": ";
    auto body = nlohmann::json::parse(answer->body, nullptr, false);
    if (answer->status == 200) {
      if (body.is_discarded()) return unusable(where + "the answer is not JSON");
      return body;
    }
    std::string message;
    if (body.is_object() && body.contains("message") && body["message"].is_string()) {
      message = printable(body["message"].get<std::string>(), 300);
    }
    const std::string status = std::to_string(answer->status);
    switch (answer->status) {
      case 401:
        return unusable(where + "401: the token is not accepted (token file '" + token_file_ + "')");
      case 403:
        return unusable(where + "403: the token's role may not do this" +
                        (message.empty() ? "" : ": " + message));
      case 404:
        return unusable(where + "404 " + (message.empty() ? "not found" : message));
      case 503:
        // The node has no roster or verdict yet, as a store without verdicts.
        if (body.is_object() && body.value("error", "") == "no_roster") {
          return check_failed(where + "503: " + message);
        }
        break;
      default:
        break;
    }
    if (answer->status >= 500) return unusable(where + status + " server error" + (message.empty() ? "" : ": " + message));
    return unusable(where + status + (message.empty() ? "" : ": " + message));
  }

  ApiClientOptions client_;
  std::string token_file_;
};

}  // namespace

CtlResult<ApiClientOptions> api_client_options(const SourceOptions& options) {
  if (options.api_url.empty()) return unusable("give --api URL (a node's API: http://host:port or https://host:port)");
  if (options.token_file.empty()) {
    return unusable("--api needs --token-file FILE (a file with the bearer token on its first line)");
  }
  auto url = parse_api_url(options.api_url);
  if (!url) return url.error();
  if (!url->tls && (options.insecure || !options.cacert_file.empty())) {
    return unusable("--cacert and --insecure apply to https:// URLs only");
  }
  if (options.insecure && !options.cacert_file.empty()) {
    return unusable("--cacert and --insecure exclude each other");
  }
  if (!options.cacert_file.empty()) {
    std::string error;
    if (!is_regular_file(options.cacert_file, error)) return unusable("--cacert: " + error);
  }
  auto token = read_token(options.token_file);
  if (!token) return token.error();
  if (options.insecure) {
    std::fprintf(stderr, "meshctl: --insecure: the certificate of %s is NOT verified; anyone on the "
                         "path may read the token and forge the answers\n", url->base.c_str());
  } else if (!url->tls && !url->loopback) {
    std::fprintf(stderr, "meshctl: warning: plain http:// to %s: the token crosses the network in clear\n",
                 url->base.c_str());
  }
  ApiClientOptions client;
  client.url = *url;
  client.token = *token;
  client.cacert_file = options.cacert_file;
  client.insecure = options.insecure;
  return client;
}

namespace {

CtlResult<std::unique_ptr<NodeSource>> open_api(const SourceOptions& options) {
  auto client = api_client_options(options);
  if (!client) return client.error();
  return std::unique_ptr<NodeSource>(std::make_unique<ApiSource>(std::move(*client), options.token_file));
}

}  // namespace

std::string no_server_message(const std::string& id) { return "no server '" + id + "'"; }

CtlResult<std::unique_ptr<NodeSource>> open_source(const SourceOptions& options) {
  const bool api = !options.api_url.empty();
  const bool data = !options.data_dir.empty();
  if (api && data) return unusable("give --data DIR or --api URL, not both");
  if (!api && (!options.token_file.empty() || !options.cacert_file.empty() || options.insecure)) {
    return unusable("--token-file, --cacert and --insecure go with --api URL");
  }
  if (api && options.token_file.empty()) {
    return unusable("--api needs --token-file FILE (a file with the bearer token on its first line)");
  }
  if (api) return open_api(options);
  if (!data) {
    return unusable("give --data DIR (a node's store, read-only) or --api URL --token-file FILE "
                    "(a node's API)");
  }
  auto store = StoreSource::open(options.data_dir);
  if (!store) return store.error();
  return std::unique_ptr<NodeSource>(std::move(*store));
}

}  // namespace mesh::ctl

// meshctl roster push: a signed roster file handed to a node's API (PUT
// /v1/roster, an admin token), from where gossip takes it to every node.
// The node checks it as it checks every roster; its answer decides the
// exit code: accepted 0; refused as invalid or not newer 1 (a check
// failed); anything else (the token, the address, the file) 2.
#include <cstdio>

#include <nlohmann/json.hpp>

#include "record/envelope.h"
#include "tools/meshctl/api_client.h"
#include "tools/meshctl/commands.h"
#include "tools/meshctl/exit_codes.h"
#include "tools/meshctl/inspect.h"
#include "tools/meshctl/output.h"

namespace mesh::ctl {
namespace {

std::string message_of(const nlohmann::json& body) {
  if (body.is_object() && body.contains("message") && body["message"].is_string()) {
    return printable(body["message"].get<std::string>(), 600);
  }
  return "";
}

int fail(Failure failure, const std::string& message) {
  std::fprintf(stderr, "meshctl roster push: %s\n", message.c_str());
  return exit_code_of(failure);
}

}  // namespace

int run_roster_push(const RosterPushOptions& options) {
  auto client = api_client_options(options.source);
  if (!client) return fail(client.code(), client.message());
  std::string error;
  auto raw = read_file(options.file_path, kRecordBytesMax, error);
  if (!raw) return fail(Failure::unusable, error);
  auto answer = http_put(*client, "/v1/roster", std::string(raw->begin(), raw->end()));
  if (!answer) return fail(answer.code(), answer.message());
  const std::string where = client->url.base + "/v1/roster: ";
  const auto body = nlohmann::json::parse(answer->body, nullptr, false);
  const std::string message = message_of(body);
  switch (answer->status) {
    case 200:
      if (options.json) {
        std::printf("%s\n", body.dump().c_str());
      } else {
        std::printf("roster version %s accepted by %s (%s servers); it spreads to every node by gossip\n",
                    body.value("roster_version", nlohmann::json()).dump().c_str(), client->url.base.c_str(),
                    body.value("servers", nlohmann::json()).dump().c_str());
      }
      return kExitOk;
    case 400: return fail(Failure::check_failed, where + "400 refused: " + message);
    case 409: return fail(Failure::check_failed, where + "409 not newer than the roster the node holds: " + message);
    case 401: return fail(Failure::unusable, where + "401: the token is not accepted (token file '" +
                                                  options.source.token_file + "')");
    case 403: return fail(Failure::unusable, where + "403: pushing a roster needs an admin token (meshctl token new --role admin)");
    default:
      return fail(Failure::unusable, where + std::to_string(answer->status) + (message.empty() ? "" : ": " + message));
  }
}

}  // namespace mesh::ctl

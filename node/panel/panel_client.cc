#include "node/panel/panel_client.h"

#include <sstream>

#include "common/regular_file.h"

namespace mesh::panel {

const char* to_string(PanelError error) {
  switch (error) {
    case PanelError::transport: return "transport";
    case PanelError::auth: return "auth";
    case PanelError::status: return "status";
    case PanelError::contract: return "contract";
    case PanelError::config: return "config";
  }
  return "?";
}

Result<Credentials, PanelError> read_credentials(const std::string& path) {
  auto text = read_regular_file(path, 64 * 1024);
  if (!text) return make_error(PanelError::config, "credentials file '" + path + "' " + text.message());
  Credentials out;
  std::istringstream lines(std::string(text->begin(), text->end()));
  std::string line;
  int number = 0;
  while (std::getline(lines, line)) {
    ++number;
    if (!line.empty() && line.back() == '\r') line.pop_back();
    const auto start = line.find_first_not_of(" \t");
    if (start == std::string::npos || line[start] == '#') continue;
    const auto space = line.find_first_of(" \t", start);
    const std::string key = line.substr(start, space == std::string::npos ? std::string::npos : space - start);
    const auto value_start = space == std::string::npos ? std::string::npos : line.find_first_not_of(" \t", space);
    std::string value = value_start == std::string::npos ? "" : line.substr(value_start);
    while (!value.empty() && (value.back() == ' ' || value.back() == '\t')) value.pop_back();
    std::string* slot = key == "token" ? &out.token : key == "username" ? &out.username
                        : key == "password"                          ? &out.password
                                                                     : nullptr;
    if (slot == nullptr || value.empty()) {
      return make_error(PanelError::config, "credentials file '" + path + "' line " + std::to_string(number) +
                                                ": expected 'token T', 'username U' or 'password P'");
    }
    for (char c : value) {
      if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) {
        return make_error(PanelError::config, "credentials file '" + path + "' line " + std::to_string(number) +
                                                  ": a control character");
      }
    }
    *slot = value;
  }
  return out;
}

Error<PanelError> status_error(const HttpResponse& response, const std::string& what) {
  const bool auth = response.status == 401 || response.status == 403;
  std::string excerpt = response.body.substr(0, 200);
  for (char& c : excerpt) {
    if (static_cast<unsigned char>(c) < 0x20) c = ' ';
  }
  return make_error(auth ? PanelError::auth : PanelError::status,
                    what + ": HTTP " + std::to_string(response.status) + (excerpt.empty() ? "" : " " + excerpt));
}

}  // namespace mesh::panel

// load_node_config: reads the file without ever blocking on it
// (common/regular_file.h), then hands the text to parse_node_config.
#include "common/regular_file.h"
#include "node/config.h"

namespace mesh::node {
namespace {

Error<ConfigError> unreadable(const std::string& path, const std::string& why) {
  return make_error(ConfigError::unreadable, "config " + path + ": " + why);
}

Error<ConfigError> too_large(const std::string& path) {
  return make_error(ConfigError::too_large, "config " + path + ": over " +
                                                std::to_string(kConfigFileBytesMax) +
                                                " bytes (1 MiB), the limit of a config file");
}

}  // namespace

Result<NodeConfig, ConfigError> load_node_config(const std::string& path) {
  auto text = read_regular_file(path, kConfigFileBytesMax);
  if (!text) {
    switch (text.code()) {
      case FileReadError::too_large: return too_large(path);
      case FileReadError::not_regular:
        return unreadable(path, text.message() + "; give the path of the TOML file");
      case FileReadError::missing:
      case FileReadError::unreadable: return unreadable(path, text.message());
    }
  }
  return parse_node_config(text.value(), "config " + path);
}

}  // namespace mesh::node

#include "node/config_table.h"

namespace mesh::node {
namespace {

const char* type_name(toml::node_type type) {
  switch (type) {
    case toml::node_type::none: return "nothing";
    case toml::node_type::table: return "a table";
    case toml::node_type::array: return "an array";
    case toml::node_type::string: return "a string";
    case toml::node_type::integer: return "an integer";
    case toml::node_type::floating_point: return "a float";
    case toml::node_type::boolean: return "a boolean";
    case toml::node_type::date: return "a date";
    case toml::node_type::time: return "a time";
    case toml::node_type::date_time: return "a date-time";
  }
  return "?";
}

}  // namespace

std::string ConfigTable::path(std::string_view key) const {
  if (name_.empty()) return std::string(key);
  return "[" + std::string(name_) + "] " + std::string(key);
}

Error<ConfigError> ConfigTable::fail(ConfigError code, const toml::node& at, std::string_view key,
                                     const std::string& what) const {
  return make_error(code, std::string(source_) + " line " + std::to_string(at.source().begin.line) +
                              ": " + path(key) + ": " + what);
}

Status<ConfigError> ConfigTable::allow_only(std::initializer_list<std::string_view> keys) const {
  for (const auto& [key, value] : table_) {
    bool known = false;
    for (std::string_view allowed : keys) known = known || key.str() == allowed;
    if (known) continue;
    std::string list;
    for (std::string_view allowed : keys) list += (list.empty() ? "" : ", ") + std::string(allowed);
    std::string where = name_.empty() ? "at the top level" : "in [" + std::string(name_) + "]";
    return fail(ConfigError::unknown_key, value, key.str(),
                "unknown key (known " + where + ": " + list + ")");
  }
  return Ok{};
}

Status<ConfigError> ConfigTable::string(std::string_view key, bool required, std::string& out,
                                        const toml::node*& node) const {
  node = table_.get(key);
  if (node == nullptr) {
    if (!required) return Ok{};
    return make_error(ConfigError::missing_key,
                      std::string(source_) + ": missing required key '" + path(key) + "'");
  }
  if (!node->is_string()) {
    return fail(ConfigError::wrong_type, *node, key,
                std::string("must be a string, got ") + type_name(node->type()));
  }
  const std::string& text = node->as_string()->get();
  if (text.size() > kConfigStringBytesMax) {
    return fail(ConfigError::bad_value, *node, key,
                "longer than " + std::to_string(kConfigStringBytesMax) + " bytes");
  }
  out = text;
  return Ok{};
}

Status<ConfigError> ConfigTable::integer_value(std::string_view key, std::int64_t min,
                                               std::int64_t max, std::int64_t& out,
                                               const toml::node*& node) const {
  node = table_.get(key);
  if (node == nullptr) return Ok{};
  if (!node->is_integer()) {
    return fail(ConfigError::wrong_type, *node, key,
                std::string("must be an integer, got ") + type_name(node->type()));
  }
  out = node->as_integer()->get();
  if (out < min || out > max) {
    return fail(ConfigError::bad_value, *node, key,
                "must be " + std::to_string(min) + ".." + std::to_string(max) + ", got " +
                    std::to_string(out));
  }
  return Ok{};
}

Status<ConfigError> ConfigTable::boolean(std::string_view key, bool& out) const {
  const toml::node* node = table_.get(key);
  if (node == nullptr) return Ok{};
  if (!node->is_boolean()) {
    return fail(ConfigError::wrong_type, *node, key,
                std::string("must be true or false, got ") + type_name(node->type()));
  }
  out = node->as_boolean()->get();
  return Ok{};
}

Status<ConfigError> ConfigTable::subtable(std::string_view key, const toml::table*& out) const {
  const toml::node* node = table_.get(key);
  out = nullptr;
  if (node == nullptr) return Ok{};
  out = node->as_table();
  if (out == nullptr) {
    return fail(ConfigError::wrong_type, *node, key,
                "must be a table ([" + std::string(key) + "]), got " + type_name(node->type()));
  }
  return Ok{};
}

}  // namespace mesh::node

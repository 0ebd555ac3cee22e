// One table of the node config file as config.cc reads it: typed getters
// that check the type and range of a key and build the error message that
// names the line and the key ("config F line 7: [probe] tls_every: must be
// 1..1000, got 0"). Private to node/config*.cc (it exposes toml++).
#pragma once

#include <cstdint>
#include <initializer_list>
#include <string>
#include <string_view>

#include "common/toml.h"
#include "node/config.h"

namespace mesh::node {

class ConfigTable {
 public:
  // `name` is "" for the top level, else the table's name ("probe").
  // REQUIRES: `table` and `source` outlive this object.
  ConfigTable(const toml::table& table, std::string_view name, std::string_view source)
      : table_(table), name_(name), source_(source) {}

  std::string_view source() const { return source_; }
  const toml::node* get(std::string_view key) const { return table_.get(key); }

  // "<source> line <at's line>: <key path>: <what>".
  Error<ConfigError> fail(ConfigError code, const toml::node& at, std::string_view key,
                          const std::string& what) const;

  // unknown_key for the first key (in file order) that is not in `keys`.
  Status<ConfigError> allow_only(std::initializer_list<std::string_view> keys) const;

  // Each getter leaves `out` alone when the key is absent (its default).
  // `node` is set to the value's node, or nullptr when absent; a missing
  // `required` key is missing_key. Strings are at most kConfigStringBytesMax.
  Status<ConfigError> string(std::string_view key, bool required, std::string& out,
                             const toml::node*& node) const;
  // An integer in min..max.
  template <class T>
  Status<ConfigError> integer(std::string_view key, std::int64_t min, std::int64_t max,
                              T& out) const {
    std::int64_t value = 0;
    const toml::node* node = nullptr;
    if (auto s = integer_value(key, min, max, value, node); !s || node == nullptr) return s;
    out = static_cast<T>(value);
    return Ok{};
  }
  Status<ConfigError> boolean(std::string_view key, bool& out) const;
  // A string that is to_string(v) for one of `values`.
  template <class E>
  Status<ConfigError> choice(std::string_view key, std::initializer_list<E> values, E& out) const {
    std::string text;
    const toml::node* node = nullptr;
    if (auto s = string(key, false, text, node); !s || node == nullptr) return s;
    std::string names;
    for (E value : values) {
      if (text == to_string(value)) {
        out = value;
        return Ok{};
      }
      names += (names.empty() ? "" : ", ") + std::string(to_string(value));
    }
    return fail(ConfigError::bad_value, *node, key,
                "must be one of " + names + ", got '" + text + "'");
  }
  // The table `[key]`, or nullptr when absent; wrong_type if not a table.
  Status<ConfigError> subtable(std::string_view key, const toml::table*& out) const;

 private:
  Status<ConfigError> integer_value(std::string_view key, std::int64_t min, std::int64_t max,
                                    std::int64_t& out, const toml::node*& node) const;
  std::string path(std::string_view key) const;

  const toml::table& table_;
  std::string_view name_;
  std::string_view source_;
};

}  // namespace mesh::node

// Server ids: the operator's names for servers ("de-fra-1"). They key records,
// roster entries and verdicts, and are compared as bytes everywhere so that
// every node orders them the same way.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace mesh {

using ServerId = std::string;

inline constexpr std::size_t kServerIdBytesMax = 64;

// True when `id` is 1..kServerIdBytesMax bytes of [a-z0-9._-], starting with
// a letter or digit. The same rule applies to route ids.
bool is_valid_server_id(std::string_view id);

}  // namespace mesh

#include "common/server_id.h"

namespace mesh {

bool is_valid_server_id(std::string_view id) {
  if (id.empty() || id.size() > kServerIdBytesMax) return false;
  auto alnum = [](char c) { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9'); };
  if (!alnum(id.front())) return false;
  for (char c : id) {
    if (!alnum(c) && c != '.' && c != '_' && c != '-') return false;
  }
  return true;
}

}  // namespace mesh

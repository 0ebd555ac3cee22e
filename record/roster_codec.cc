// Roster payload codec (docs/PROTOCOL.md, "Roster payload"):
//   [routes, servers, params]
//   route  = [id str, name str]
//   server = [id str, country str, probe_host str, probe_port uint, sni str,
//             gossip_host str, gossip_port uint, key bin(32), routes [str...]]
//   params = [11 uints, Parameters fields in declaration order]
#include <algorithm>
#include <limits>
#include <span>
#include <msgpack.hpp>

#include "record/msgpack_reader.h"
#include "record/parameters.h"
#include "record/roster.h"

namespace mesh {
namespace {

constexpr std::size_t kRouteFields = 2;
constexpr std::size_t kServerFields = 9;
constexpr std::size_t kTopFields = 3;
// Nesting: payload > servers > server > route ids.
constexpr std::size_t kRosterDepthMax = 4;
// The decoder's per-value limits (msgpack-c's unpack_limit below).
constexpr std::size_t kArrayElementsMax = std::max(kRosterServersMax, kRosterRoutesMax);

using Object = msgpack::object;

Error<RosterError> malformed(const std::string& where, const std::string& what) {
  return make_error(RosterError::malformed, "roster payload: " + where + ": " + what);
}

Result<const Object*, RosterError> as_array(const Object& object, const std::string& where,
                                            std::optional<std::size_t> count) {
  if (object.type != msgpack::type::ARRAY) return malformed(where, "not an array");
  if (count && object.via.array.size != *count) {
    return malformed(where, "array of " + std::to_string(object.via.array.size) +
                                " elements, expected " + std::to_string(*count));
  }
  return object.via.array.ptr;
}

Result<std::string, RosterError> as_string(const Object& object, const std::string& where) {
  if (object.type != msgpack::type::STR) return malformed(where, "not a string");
  return std::string(object.via.str.ptr, object.via.str.size);
}

Result<std::uint64_t, RosterError> as_uint(const Object& object, const std::string& where,
                                           std::uint64_t max) {
  if (object.type != msgpack::type::POSITIVE_INTEGER) {
    return malformed(where, "not a non-negative integer");
  }
  if (object.via.u64 > max) return malformed(where, "integer out of range");
  return object.via.u64;
}

Result<Route, RosterError> decode_route(const Object& object, const std::string& where) {
  auto fields = as_array(object, where, kRouteFields);
  if (!fields) return fields.error();
  auto id = as_string((*fields)[0], where + " id");
  if (!id) return id.error();
  auto name = as_string((*fields)[1], where + " name");
  if (!name) return name.error();
  return Route{std::move(*id), std::move(*name)};
}

Result<Endpoint, RosterError> decode_endpoint(const Object& host, const Object& port,
                                              const std::string& where) {
  auto host_text = as_string(host, where + " host");
  if (!host_text) return host_text.error();
  auto port_value = as_uint(port, where + " port", 65535);
  if (!port_value) return port_value.error();
  return Endpoint{std::move(*host_text), static_cast<std::uint16_t>(*port_value)};
}

Result<ServerEntry, RosterError> decode_server(const Object& object, const std::string& where) {
  auto fields = as_array(object, where, kServerFields);
  if (!fields) return fields.error();
  const Object* f = *fields;
  ServerEntry server;
  auto id = as_string(f[0], where + " id");
  if (!id) return id.error();
  server.id = std::move(*id);
  auto country = as_string(f[1], where + " country");
  if (!country) return country.error();
  server.country = std::move(*country);
  auto probe = decode_endpoint(f[2], f[3], where + " probe");
  if (!probe) return probe.error();
  server.probe = std::move(*probe);
  auto sni = as_string(f[4], where + " sni");
  if (!sni) return sni.error();
  server.sni = std::move(*sni);
  auto gossip = decode_endpoint(f[5], f[6], where + " gossip");
  if (!gossip) return gossip.error();
  server.gossip = std::move(*gossip);
  if (f[7].type != msgpack::type::BIN || f[7].via.bin.size != kPublicKeyBytes) {
    return malformed(where + " key", "not a bin of 32 bytes");
  }
  std::copy(f[7].via.bin.ptr, f[7].via.bin.ptr + kPublicKeyBytes, server.key.begin());
  auto routes = as_array(f[8], where + " routes", std::nullopt);
  if (!routes) return routes.error();
  for (std::uint32_t i = 0; i < f[8].via.array.size; ++i) {
    auto route = as_string((*routes)[i], where + " routes[" + std::to_string(i) + "]");
    if (!route) return route.error();
    server.routes.push_back(std::move(*route));
  }
  return server;
}

Result<Parameters, RosterError> decode_params(const Object& object) {
  std::span<const ParameterSpec> specs = parameter_specs();
  auto fields = as_array(object, "params", specs.size());
  if (!fields) return fields.error();
  Parameters params;
  for (std::size_t i = 0; i < specs.size(); ++i) {
    std::string where = std::string("params.") + specs[i].name;
    auto value = as_uint((*fields)[i], where, std::numeric_limits<std::int64_t>::max());
    if (!value) return value.error();
    auto v = static_cast<std::int64_t>(*value);
    if (v < specs[i].min || v > specs[i].max) {
      return make_error(RosterError::bad_parameter,
                        where + ": " + std::to_string(v) + " is outside " +
                            std::to_string(specs[i].min) + ".." + std::to_string(specs[i].max));
    }
    specs[i].set(params, v);
  }
  return params;
}

Result<Roster, RosterError> decode_tree(const Object& root, std::uint64_t version) {
  auto top = as_array(root, "top level", kTopFields);
  if (!top) return top.error();
  Roster roster;
  roster.version = version;
  auto routes = as_array((*top)[0], "routes", std::nullopt);
  if (!routes) return routes.error();
  for (std::uint32_t i = 0; i < (*top)[0].via.array.size; ++i) {
    auto route = decode_route((*routes)[i], "routes[" + std::to_string(i) + "]");
    if (!route) return route.error();
    roster.routes.push_back(std::move(*route));
  }
  auto servers = as_array((*top)[1], "servers", std::nullopt);
  if (!servers) return servers.error();
  for (std::uint32_t i = 0; i < (*top)[1].via.array.size; ++i) {
    auto server = decode_server((*servers)[i], "servers[" + std::to_string(i) + "]");
    if (!server) return server.error();
    roster.servers.push_back(std::move(*server));
  }
  auto params = decode_params((*top)[2]);
  if (!params) return params.error();
  roster.params = *params;
  return roster;
}

// msgpack-c reports a value over the limits without saying where; this
// walks the layout with the strict reader, under the same limits, to name
// the field ("servers[2] sni: a string over 253 bytes"). Empty when the
// value is not where the layout puts one.
std::string oversize_field(ByteView payload) {
  using msgpack_reader::ReadStatus;
  static constexpr const char* kRouteFieldNames[] = {"id", "name"};
  static constexpr const char* kServerFieldNames[] = {"id", "country", "probe host", "probe port", "sni",
                                                      "gossip host", "gossip port", "key", "routes"};
  const msgpack_reader::SkipLimits limits{kHostBytesMax, kPublicKeyBytes,
                                          static_cast<std::uint32_t>(kArrayElementsMax),
                                          static_cast<std::uint32_t>(kRosterDepthMax)};
  msgpack_reader::Reader reader(payload);
  std::string found;
  auto check = [&](ReadStatus status, const std::string& where) {
    if (status == ReadStatus::str_too_long) found = where + ": a string over " + std::to_string(kHostBytesMax) + " bytes";
    if (status == ReadStatus::bin_too_long) found = where + ": a bin over " + std::to_string(kPublicKeyBytes) + " bytes";
    if (status == ReadStatus::array_too_long) {
      found = where + ": an array over " + std::to_string(kArrayElementsMax) + " elements";
    }
    return status == ReadStatus::ok;
  };
  auto header = [&](const std::string& where, std::uint32_t& count) {
    return check(reader.read_array_header(&count, limits.array_elements_max), where);
  };
  // Each entry of a list of arrays (routes or servers), field by field.
  auto entries = [&](const std::string& list, std::span<const char* const> names) {
    std::uint32_t count = 0, fields = 0;
    if (!header(list, count)) return false;
    for (std::uint32_t i = 0; i < count; ++i) {
      const std::string entry = list + "[" + std::to_string(i) + "]";
      if (!header(entry, fields)) return false;
      for (std::uint32_t f = 0; f < fields; ++f) {
        const std::string name = f < names.size() ? names[f] : "field " + std::to_string(f);
        if (!check(reader.skip_value(limits), entry + " " + name)) return false;
      }
    }
    return true;
  };
  std::uint32_t top = 0;
  if (header("top level", top) && top == kTopFields && entries("routes", kRouteFieldNames) &&
      entries("servers", kServerFieldNames)) {
    check(reader.skip_value(limits), "params");
  }
  return found;
}

void pack_string(msgpack::packer<msgpack::sbuffer>& packer, const std::string& text) {
  packer.pack_str(static_cast<std::uint32_t>(text.size()));
  packer.pack_str_body(text.data(), static_cast<std::uint32_t>(text.size()));
}

void pack_server(msgpack::packer<msgpack::sbuffer>& packer, const ServerEntry& server) {
  packer.pack_array(kServerFields);
  pack_string(packer, server.id);
  pack_string(packer, server.country);
  pack_string(packer, server.probe.host);
  packer.pack_uint16(server.probe.port);
  pack_string(packer, server.sni);
  pack_string(packer, server.gossip.host);
  packer.pack_uint16(server.gossip.port);
  packer.pack_bin(kPublicKeyBytes);
  packer.pack_bin_body(reinterpret_cast<const char*>(server.key.data()), kPublicKeyBytes);
  packer.pack_array(static_cast<std::uint32_t>(server.routes.size()));
  for (const std::string& route : server.routes) pack_string(packer, route);
}

}  // namespace

Bytes encode_roster_payload(const Roster& roster) {
  msgpack::sbuffer buffer;
  msgpack::packer<msgpack::sbuffer> packer(buffer);
  packer.pack_array(kTopFields);
  packer.pack_array(static_cast<std::uint32_t>(roster.routes.size()));
  for (const Route& route : roster.routes) {
    packer.pack_array(kRouteFields);
    pack_string(packer, route.id);
    pack_string(packer, route.name);
  }
  packer.pack_array(static_cast<std::uint32_t>(roster.servers.size()));
  for (const ServerEntry& server : roster.servers) pack_server(packer, server);
  std::span<const ParameterSpec> specs = parameter_specs();
  packer.pack_array(static_cast<std::uint32_t>(specs.size()));
  for (const ParameterSpec& spec : specs) {
    // Negative values cannot be encoded; validate_roster rejects them anyway.
    packer.pack_uint64(
        static_cast<std::uint64_t>(std::max<std::int64_t>(0, spec.get(roster.params))));
  }
  const auto* begin = reinterpret_cast<const std::uint8_t*>(buffer.data());
  return Bytes(begin, begin + buffer.size());
}

Result<Roster, RosterError> decode_roster_payload(ByteView payload, std::uint64_t version) {
  if (payload.size() > kRosterPayloadBytesMax) {
    return make_error(RosterError::too_large, "roster payload: " + std::to_string(payload.size()) +
                                                  " bytes, over the limit");
  }
  msgpack::unpack_limit limit(kArrayElementsMax, 0, kHostBytesMax, kPublicKeyBytes, 0, kRosterDepthMax);
  msgpack::object_handle handle;
  std::size_t offset = 0;
  try {
    msgpack::unpack(handle, reinterpret_cast<const char*>(payload.data()), payload.size(), offset,
                    nullptr, nullptr, limit);
  } catch (const msgpack::depth_size_overflow&) {
    return make_error(RosterError::malformed,
                      "roster payload: not valid msgpack (nested "
                      "deeper than the layout)");
  } catch (const msgpack::map_size_overflow&) {
    // The map limit is 0 because the layout has no maps: a map is not too
    // large, it is not the layout.
    return make_error(RosterError::malformed,
                      "roster payload: malformed: a map where the layout has an array (it has no maps)");
  } catch (const msgpack::ext_size_overflow&) {
    return make_error(RosterError::malformed, "roster payload: malformed: an ext value (the layout has none)");
  } catch (const msgpack::size_overflow&) {
    const std::string where = oversize_field(payload);
    return make_error(RosterError::too_large,
                      "roster payload: " + (where.empty() ? "an array, string or bin is over its limit" : where));
  } catch (const std::exception&) {
    return make_error(RosterError::malformed,
                      "roster payload: not valid msgpack (truncated, "
                      "too deeply nested or of an unused type)");
  }
  if (offset != payload.size()) {
    return make_error(
        RosterError::malformed,
        "roster payload: " + std::to_string(payload.size() - offset) + " trailing bytes");
  }
  auto roster = decode_tree(handle.get(), version);
  if (!roster) return roster;
  if (auto status = validate_roster(*roster); !status) return status.error();
  return roster;
}

}  // namespace mesh

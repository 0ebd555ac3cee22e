#include "tests/record/fixtures.h"

#include <array>
#include <cstdio>

namespace mesh::test {

KeyPair test_key(std::uint8_t n) {
  std::array<std::uint8_t, 32> seed{};
  seed.fill(n);
  return key_pair_from_seed(seed);
}

Roster sample_roster(std::size_t servers, std::uint64_t version) {
  static const char* kCountries[] = {"DE", "NL", "FR"};
  Roster roster;
  roster.version = version;
  roster.routes = {{"eu", "Europe"}, {"de", "Germany only"}};
  for (std::size_t i = 0; i < servers; ++i) {
    char id[32];
    std::snprintf(id, sizeof id, "s-%03zu", i);
    ServerEntry server;
    server.id = id;
    server.country = kCountries[i % 3];
    server.probe = {"10.0." + std::to_string(i / 250) + "." + std::to_string(i % 250 + 1), 443};
    server.sni = "www.example.com";
    server.gossip = {server.probe.host, 7946};
    server.key = test_key(static_cast<std::uint8_t>(1 + i % 250)).public_key;
    if (i >= 250) server.key[31] ^= static_cast<std::uint8_t>(i / 250);  // stay unique
    server.routes = {"eu"};
    if (server.country == std::string("DE")) server.routes.push_back("de");
    roster.servers.push_back(server);
  }
  return roster;
}

bool contains(const std::string& text, const std::string& fragment) {
  return text.find(fragment) != std::string::npos;
}

}  // namespace mesh::test

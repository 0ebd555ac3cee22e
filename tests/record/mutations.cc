#include "tests/record/mutations.h"

#include <iterator>

#include "tests/record/fixtures.h"

namespace mesh::test {
namespace {

constexpr std::uint32_t kPayloadMutationSeed = 20240611 + 1;
constexpr int kPayloadMutationRounds = 3000;
constexpr std::uint32_t kTypedMutationSeed = 777 + 1;
constexpr int kTypedMutationRounds = 20000;
constexpr UnixMs kTypedMutationNow = 1'700'000'000'000;

// Bytes that start msgpack values of every family.
constexpr std::uint8_t kTypeBytes[] = {0x00, 0x7f, 0x80, 0x81, 0x90, 0x93, 0x95, 0xa0, 0xa3,
                                       0xbf, 0xc0, 0xc1, 0xc2, 0xc3, 0xc4, 0xc5, 0xc6, 0xc7,
                                       0xca, 0xcb, 0xcc, 0xcd, 0xce, 0xcf, 0xd0, 0xd3, 0xd4,
                                       0xd9, 0xda, 0xdb, 0xdc, 0xdd, 0xde, 0xe0, 0xff};

}  // namespace

Bytes mutate_bytes(Bytes input, std::mt19937& rng) {
  int edits = 1 + static_cast<int>(rng() % 4);
  for (int e = 0; e < edits && !input.empty(); ++e) {
    std::size_t at = rng() % input.size();
    switch (rng() % 4) {
      case 0: input[at] ^= static_cast<std::uint8_t>(1u << (rng() % 8)); break;
      case 1: input[at] = static_cast<std::uint8_t>(rng()); break;
      case 2:
        input.insert(input.begin() + static_cast<std::ptrdiff_t>(at),
                     static_cast<std::uint8_t>(rng()));
        break;
      default: input.erase(input.begin() + static_cast<std::ptrdiff_t>(at)); break;
    }
  }
  return input;
}

Bytes mutate_msgpack(Bytes input, std::mt19937& rng) {
  int edits = 1 + static_cast<int>(rng() % 3);
  for (int e = 0; e < edits && !input.empty(); ++e) {
    std::size_t at = rng() % input.size();
    auto random_byte = static_cast<std::uint8_t>(rng());
    auto type_byte = kTypeBytes[rng() % std::size(kTypeBytes)];
    switch (rng() % 6) {
      case 0: input[at] ^= static_cast<std::uint8_t>(1u << (rng() % 8)); break;
      case 1: input[at] = random_byte; break;
      case 2: input[at] = type_byte; break;
      case 3: input.insert(input.begin() + static_cast<std::ptrdiff_t>(at), type_byte); break;
      case 4: input.erase(input.begin() + static_cast<std::ptrdiff_t>(at)); break;
      default: input.resize(at); break;
    }
  }
  return input;
}

void for_each_payload_mutation(
    const std::function<void(int round, const Bytes& roster_payload, const ReportInput&)>& visit) {
  std::mt19937 rng(kPayloadMutationSeed);
  Roster roster = sample_roster(8, 2);
  Bytes roster_payload = encode_roster_payload(roster);
  Report report;
  report.view.roster_version = 2;
  report.view.results = {{1, 0, 5, 1000, 1000, ProbeFailure::none},
                         {3, 2, 0, 2000, 500, ProbeFailure::tls_alert}};
  Bytes report_payload = encode_report_payload(report, 5000);
  for (int round = 0; round < kPayloadMutationRounds; ++round) {
    Bytes mutated_roster = mutate_bytes(roster_payload, rng);
    Bytes mutated_report = mutate_bytes(report_payload, rng);
    visit(round, mutated_roster, ReportInput{mutated_report, roster, 0, 5000});
  }
}

Report sample_report(std::uint32_t servers, std::uint64_t version, UnixMs now) {
  Report report;
  report.self_check = {false, true, "listener down"};
  report.metrics.cpu_permille = 999;
  report.metrics.memory_used_kib = 1ull << 40;
  report.metrics.load_average_milli = 70'000;
  report.view.roster_version = version;
  for (std::uint32_t t = 1; t < servers; t += 2) {
    if (t % 5 == 0) {
      report.view.results.push_back({t, t, 0, now - 1000, t % 3 ? now - 90'000 : 0,
                                     static_cast<ProbeFailure>(1 + t % 8)});
    } else {
      report.view.results.push_back({t, 0, 3 + t, now - 4000, now - 4000, ProbeFailure::none});
    }
  }
  return report;
}

void for_each_typed_report_mutation(
    const std::function<void(int round, const ReportInput&)>& visit) {
  std::mt19937 rng(kTypedMutationSeed);
  Roster roster = sample_roster(12, 3);
  Bytes current = encode_report_payload(sample_report(12, 3, kTypedMutationNow), kTypedMutationNow);
  Bytes other_version =
      encode_report_payload(sample_report(40, 2, kTypedMutationNow), kTypedMutationNow);
  for (int round = 0; round < kTypedMutationRounds; ++round) {
    const Bytes& original = round % 3 == 0 ? other_version : current;
    Bytes mutated = mutate_msgpack(original, rng);
    visit(round, ReportInput{mutated, roster, round % 2 == 0 ? 0u : 5u, kTypedMutationNow});
  }
}

}  // namespace mesh::test

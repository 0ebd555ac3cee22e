// The agent's LMDB store (node/lmdb_agent_store.h): a batch lands whole or
// not at all, load() gives back everything, and a data dir that is not this
// node's is refused with a clear error before anything is written.
#include <doctest/doctest.h>
#include <sys/stat.h>

#include <fstream>

#include "node/lmdb_agent_store.h"
#include "tests/gossip/fixture.h"
#include "tests/tools/run_process.h"

namespace mesh::node {
namespace {

using gossip::testing::kStartMs;
using gossip::testing::test_key;

std::shared_ptr<const Bytes> shared(Bytes bytes) { return std::make_shared<const Bytes>(std::move(bytes)); }

agent::StoreBatch roster_and_reports(const Bytes& roster, const std::vector<Bytes>& reports) {
  agent::StoreBatch batch;
  batch.put_records.push_back({RecordKind::roster, kOperatorOrigin, 0, shared(roster)});
  for (std::uint32_t i = 0; i < reports.size(); ++i) {
    static const std::string names[] = {"s0", "s1", "s2"};
    batch.put_records.push_back({RecordKind::report, names[i], i, shared(reports[i])});
  }
  batch.put_state.emplace_back("probe/s1", Bytes(34, 7));
  return batch;
}

TEST_CASE("a batch is stored whole, load() gives it back, erases remove") {
  test::TempDir dir;
  auto store = LmdbAgentStore::open(dir.path(), "s0", test_key(0).public_key);
  REQUIRE(store.ok());
  const Bytes roster = gossip::testing::signed_roster(gossip::testing::make_roster(1, 3));
  const std::vector<Bytes> reports = {gossip::testing::signed_report(0, 1, kStartMs),
                                      gossip::testing::signed_report(1, 1, kStartMs)};
  REQUIRE((*store)->apply(roster_and_reports(roster, reports)).ok());
  auto loaded = (*store)->load();
  REQUIRE(loaded.ok());
  CHECK(loaded->records.size() == 3);
  CHECK(loaded->records.front() == roster);  // the roster first: it is needed to check the rest
  CHECK(loaded->state.at("probe/s1") == Bytes(34, 7));
  agent::StoreBatch erase;
  erase.erase_records.emplace_back(RecordKind::report, "s1");
  erase.erase_state.push_back("probe/s1");
  REQUIRE((*store)->apply(erase).ok());
  loaded = (*store)->load();
  CHECK(loaded->records.size() == 2);
  CHECK(!loaded->state.contains("probe/s1"));
}

TEST_CASE("a batch with one bad entry writes nothing at all") {
  test::TempDir dir;
  auto store = LmdbAgentStore::open(dir.path(), "s0", test_key(0).public_key);
  REQUIRE(store.ok());
  const Bytes roster = gossip::testing::signed_roster(gossip::testing::make_roster(1, 3));
  agent::StoreBatch batch = roster_and_reports(roster, {gossip::testing::signed_report(0, 1, kStartMs)});
  batch.put_state.emplace_back(std::string(200, 'k'), Bytes{1});  // key over its bound
  auto applied = (*store)->apply(batch);
  REQUIRE(!applied.ok());
  CHECK((*store)->last_error().find("state key") != std::string::npos);
  auto loaded = (*store)->load();
  REQUIRE(loaded.ok());
  CHECK(loaded->records.empty());
  CHECK(!loaded->state.contains("probe/s1"));
}

TEST_CASE("a data dir that is missing, foreign or another node's is refused and left alone") {
  test::TempDir dir;
  auto missing = LmdbAgentStore::open(dir.file("nowhere"), "s0", test_key(0).public_key);
  REQUIRE(!missing.ok());
  CHECK(missing.message().find("does not exist") != std::string::npos);
  CHECK(::access(dir.file("nowhere").c_str(), F_OK) != 0);
  ::mkdir(dir.file("other").c_str(), 0700);
  std::ofstream(dir.file("other") + "/photo.jpg") << "x";
  auto foreign = LmdbAgentStore::open(dir.file("other"), "s0", test_key(0).public_key);
  REQUIRE(!foreign.ok());
  CHECK(foreign.message().find("photo.jpg") != std::string::npos);
  CHECK(::access((dir.file("other") + "/data.mdb").c_str(), F_OK) != 0);
  ::mkdir(dir.file("s0").c_str(), 0700);
  REQUIRE(LmdbAgentStore::open(dir.file("s0"), "s0", test_key(0).public_key).ok());
  auto another = LmdbAgentStore::open(dir.file("s0"), "s1", test_key(1).public_key);
  REQUIRE(!another.ok());
  CHECK(another.message().find("belongs to node 's0'") != std::string::npos);
  auto rekeyed = LmdbAgentStore::open(dir.file("s0"), "s0", test_key(5).public_key);
  CHECK(!rekeyed.ok());
  CHECK(LmdbAgentStore::open(dir.file("s0"), "s0", test_key(0).public_key).ok());
}

}  // namespace
}  // namespace mesh::node

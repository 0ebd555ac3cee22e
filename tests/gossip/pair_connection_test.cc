// Which connection of a pair carries frames (gossip/pair_connection.h): the
// two members of a pair agree on one without a word, whatever each has open.
#include "gossip/pair_connection.h"

#include <doctest/doctest.h>

namespace mesh::gossip {
namespace {

TEST_CASE("a node writes on its own connection, the peer's adopted one, or opens one") {
  CHECK(pair_connection(true, false, false) == PairConnection::ours);
  CHECK(pair_connection(true, false, true) == PairConnection::ours);
  CHECK(pair_connection(false, true, false) == PairConnection::theirs);
  CHECK(pair_connection(false, true, true) == PairConnection::theirs);
  CHECK(pair_connection(false, false, false) == PairConnection::open_ours);
  CHECK(pair_connection(false, false, true) == PairConnection::open_ours);
}

TEST_CASE("with both connections open, both members write on the one the smaller id opened") {
  // The smaller id's side: its own connection; the larger's: the one it adopted, the same.
  CHECK(pair_connection(true, true, true) == PairConnection::ours);
  CHECK(pair_connection(true, true, false) == PairConnection::theirs);
}

}  // namespace
}  // namespace mesh::gossip

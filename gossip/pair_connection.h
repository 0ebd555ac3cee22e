// Which connection of a pair carries a node's frames to a peer
// (docs/PROTOCOL.md, Gossip, "Connections"). The daemon's PeerLink and
// meshsim's streams both ask this, so the simulator cannot drift from the
// daemon it models. Pure.
#pragma once

namespace mesh::gossip {

enum class PairConnection {
  ours,       // the connection this node opened
  theirs,     // the peer's, adopted
  open_ours,  // neither is open: this node opens one
};

// With both open, the one the member with the smaller server id opened:
// both sides agree without a word, and the other carries nothing.
constexpr PairConnection pair_connection(bool ours_open, bool theirs_open, bool self_id_smaller) {
  if (ours_open && (!theirs_open || self_id_smaller)) return PairConnection::ours;
  if (theirs_open) return PairConnection::theirs;
  return PairConnection::open_ours;
}

}  // namespace mesh::gossip

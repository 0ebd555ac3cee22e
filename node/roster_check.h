// A signed roster record (the roster file, or the roster a store holds)
// checked the way the node accepts one (docs/PROTOCOL.md, "Roster
// payload"), and, when it is refused, why in words an operator can act on
// (docs/CONFIG.md, "A roster refused"); the roster a start would hold.
// Pure but for read_roster_file: no clock, no socket.
//
// What can be told apart. The record envelope does not carry the signer's
// public key, and an Ed25519 public key cannot be recovered from a
// signature, so a roster that is not signed by operator_key is one of:
//   damaged     the bytes are not a signed roster (do not decode, another
//               kind, a payload that breaks the roster rules, a signature
//               no key can make): altered after signing, or not written by
//               `meshctl roster sign`, which signs only valid rosters;
//   wrong_key   a valid roster whose signature verifies under a key the
//               node knows and can name (this node's key, a server's key
//               in the roster): signed with the wrong key file;
//   not_signed_by_operator_key  a valid roster, a well-formed signature, and
//               no key the node knows verifies it: signed with another
//               operator key, or edited after signing so that it still
//               decodes. Nothing in the bytes tells these two apart; the
//               message says so and how to find out.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "common/bytes.h"
#include "common/result.h"
#include "record/keys.h"
#include "record/roster.h"

namespace mesh::node {

enum class RosterRefusal {
  none,                        // accepted: signed by operator_key, a valid roster
  damaged,                     // not a signed roster record as meshctl writes one
  wrong_key,                   // signed by a key the node can name, not operator_key
  not_signed_by_operator_key,  // valid, and verified by no key the node knows
};

// "damaged", "wrong_key", "not_signed_by_operator_key" ("none" when accepted).
const char* to_string(RosterRefusal refusal);

// A key the node knows, with the words that name it ("this node's key",
// "server n3's key").
struct NamedKey {
  std::string name;
  PublicKey key{};
};

struct RosterCheck {
  RosterRefusal refusal = RosterRefusal::none;
  // Refused: why, in a sentence that names operator_key (and the signer,
  // when known). Accepted: "version 7, 9 servers".
  std::string message;
  std::optional<Roster> roster;  // the decoded roster (when it decodes, even if refused)
  std::optional<NamedKey> signer;  // wrong_key: the key that verifies it

  bool accepted() const { return refusal == RosterRefusal::none; }
};

// Checks `raw` against `operator_key`. When the signature does not verify,
// it is tried against `known` and against the keys of the servers of the
// roster it carries, so that a roster signed with a node's key file says
// so. `known` holds, say, this node's own key.
RosterCheck check_roster_record(ByteView raw, const PublicKey& operator_key, const std::vector<NamedKey>& known);

// The roster file as a start reads it: the raw bytes of a signed roster
// record (`meshctl roster sign`), a regular file of at most one record's
// size. `bytes` nullopt: there is no file; `unreadable`: why it cannot be
// read (a FIFO, too large, no permission).
struct RosterFile {
  std::string path;
  std::optional<Bytes> bytes;
  std::optional<std::string> unreadable;
};
RosterFile read_roster_file(const std::string& path);

// The roster a start holds (node/daemon_roster.cc, `meshnode
// --check-config`): the roster file's when it is valid and newer than the
// store's, else the store's (`stored`: the record a store holds, if any).
struct StartRoster {
  std::optional<Roster> held;
  std::string source;  // "roster file '...'" or "the data dir's roster"
  // Why the roster file does not serve ("roster file 'X' refused: ..."),
  // nullopt when it serves, is not newer, or the store's serves and there is no file.
  std::optional<std::string> file_problem;
  // Without `held`: why there is no roster to start from, every reason named.
  std::string no_roster;
};
StartRoster choose_start_roster(const RosterFile& file, const std::optional<Bytes>& stored,
                                const PublicKey& operator_key, const std::vector<NamedKey>& known);

// Whether this node (`node_id`, `node_key`) is in `roster` with its key;
// nullopt when it is, else the sentence that says what differs, with both
// keys named when they differ.
enum class MembershipProblem { not_in_roster, key_mismatch };
const char* to_string(MembershipProblem problem);
struct Membership {
  MembershipProblem problem;
  std::string message;
};
std::optional<Membership> check_membership(const Roster& roster, const std::string& node_id,
                                           const PublicKey& node_key);

// Whether the roster's `gossip` endpoint of this node (`roster_gossip`)
// reaches `[gossip] listen` (`listen`): the same port, and the same address
// unless the listener takes every address or the roster names a host by
// DNS (not resolved here). nullopt when it does, else the sentence. Peers
// connect to the roster's endpoint: a mismatch is a mistake unless a port
// forward or NAT sits between them.
std::optional<std::string> gossip_endpoint_mismatch(const Endpoint& roster_gossip, const Endpoint& listen);

}  // namespace mesh::node

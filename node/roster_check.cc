#include "node/roster_check.h"

#include <sodium.h>

#include <algorithm>
#include <array>

#include "common/regular_file.h"
#include "record/envelope.h"

namespace mesh::node {
namespace {

// The order of Ed25519's group, little-endian: a signature's scalar half S
// is always below it (libsodium refuses any other).
constexpr std::array<std::uint8_t, 32> kGroupOrder = {
    0xed, 0xd3, 0xf5, 0x5c, 0x1a, 0x63, 0x12, 0x58, 0xd6, 0x9c, 0xf7, 0xa2, 0xde, 0xf9, 0xde, 0x14,
    0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x10};

// Whether `signature` has the form every Ed25519 signature has: R a point
// of the group (R = [r]B), S reduced below the group's order. Bytes that
// fail this were made by no key: the signature itself was altered.
bool well_formed(const Signature& signature) {
  if (crypto_core_ed25519_is_valid_point(signature.data()) != 1) return false;
  for (int i = 31; i >= 0; --i) {
    const std::uint8_t s = signature[32 + static_cast<std::size_t>(i)];
    if (s != kGroupOrder[static_cast<std::size_t>(i)]) return s < kGroupOrder[static_cast<std::size_t>(i)];
  }
  return false;  // S == L
}

std::string hex(const PublicKey& key) { return public_key_to_hex(key); }

RosterCheck refused(RosterRefusal refusal, std::string message, std::optional<Roster> roster = std::nullopt) {
  RosterCheck check;
  check.refusal = refusal;
  check.message = std::move(message);
  check.roster = std::move(roster);
  return check;
}

std::string describe(const Roster& roster) {
  return "version " + std::to_string(roster.version) + ", " + std::to_string(roster.servers.size()) + " servers";
}

// A key among `known` and the roster's own servers' keys that verifies the
// signature, with its name.
std::optional<NamedKey> find_signer(const Envelope& envelope, const Roster& roster, std::vector<NamedKey> known) {
  for (const ServerEntry& server : roster.servers) known.push_back({"server " + server.id + "'s key", server.key});
  for (const NamedKey& candidate : known) {
    if (verify_envelope(envelope, candidate.key)) return candidate;
  }
  return std::nullopt;
}

}  // namespace

const char* to_string(RosterRefusal refusal) {
  switch (refusal) {
    case RosterRefusal::none: return "none";
    case RosterRefusal::damaged: return "damaged";
    case RosterRefusal::wrong_key: return "wrong_key";
    case RosterRefusal::not_signed_by_operator_key: return "not_signed_by_operator_key";
  }
  return "unknown";
}

const char* to_string(MembershipProblem problem) {
  return problem == MembershipProblem::not_in_roster ? "not_in_roster" : "key_mismatch";
}

RosterCheck check_roster_record(ByteView raw, const PublicKey& operator_key, const std::vector<NamedKey>& known) {
  constexpr const char* kDamaged = " (damaged, or altered after signing: `meshctl roster sign` writes no such file)";
  auto envelope = decode_envelope(raw);
  if (!envelope) return refused(RosterRefusal::damaged, "not a signed record: " + envelope.message() + kDamaged);
  if (envelope->kind != RecordKind::roster || envelope->origin != kOperatorOrigin) {
    return refused(RosterRefusal::damaged, std::string("a signed ") + mesh::to_string(envelope->kind) +
                                               " record from '" + envelope->origin + "', not the operator's roster");
  }
  auto roster = decode_roster_payload(envelope->payload, envelope->seq);
  if (!roster) {
    return refused(RosterRefusal::damaged,
                   "its payload is not a valid roster (" + std::string(to_string(roster.code())) + ": " +
                       roster.message() + ")" + kDamaged);
  }
  if (verify_envelope(*envelope, operator_key)) {
    RosterCheck check;
    check.message = describe(*roster) + ", signed by operator_key " + hex(operator_key);
    check.roster = std::move(roster.value());
    return check;
  }
  const std::string what = "roster " + describe(*roster) + " is not signed by operator_key " + hex(operator_key);
  if (!well_formed(envelope->signature)) {
    return refused(RosterRefusal::damaged, what + ": its signature is not one any key makes" + kDamaged,
                   std::move(roster.value()));
  }
  if (auto signer = find_signer(*envelope, *roster, known)) {
    RosterCheck check = refused(RosterRefusal::wrong_key,
                                what + ": it is signed with " + signer->name + " " + hex(signer->key) +
                                    " (sign rosters with the operator's key file: meshctl roster sign --key operator.key)",
                                std::move(roster.value()));
    check.signer = std::move(signer);
    return check;
  }
  return refused(RosterRefusal::not_signed_by_operator_key,
                 what + ": it is a valid roster with a well-formed signature, so it was most likely signed with "
                        "another operator key (or edited after signing, which its bytes cannot tell apart); "
                        "`meshctl roster show --file FILE --operator-key HEX` says whether HEX signed it",
                 std::move(roster.value()));
}

RosterFile read_roster_file(const std::string& path) {
  RosterFile file{path, std::nullopt, std::nullopt};
  auto text = read_regular_file(path, kRecordBytesMax);
  if (text) {
    file.bytes = Bytes(text->begin(), text->end());
  } else if (text.code() != FileReadError::missing) {
    file.unreadable = "roster file '" + path + "' " + text.message();
  }
  return file;
}

StartRoster choose_start_roster(const RosterFile& file, const std::optional<Bytes>& stored,
                                const PublicKey& operator_key, const std::vector<NamedKey>& known) {
  StartRoster out;
  std::optional<RosterCheck> from_file, from_store;
  std::string file_said;
  if (file.unreadable) {
    file_said = *file.unreadable;
  } else if (!file.bytes) {
    file_said = "roster file '" + file.path + "' does not exist";
  } else {
    from_file = check_roster_record(*file.bytes, operator_key, known);
    if (!from_file->accepted()) file_said = "roster file '" + file.path + "' refused: " + from_file->message;
  }
  if (stored) from_store = check_roster_record(*stored, operator_key, known);
  if (from_file && from_file->accepted()) {
    out.held = from_file->roster;
    out.source = "roster file '" + file.path + "'";
  }
  if (from_store && from_store->accepted() && (!out.held || from_store->roster->version > out.held->version)) {
    out.held = from_store->roster;
    out.source = "the data dir's roster";
  }
  if (!file_said.empty() && (file.bytes || file.unreadable)) out.file_problem = file_said;
  if (!out.held) {
    out.no_roster = "no roster to start from: " + file_said + "; ";
    out.no_roster += from_store ? "and the roster the data dir holds is refused too (" + from_store->message +
                                      "), so operator_key in the config is most likely not the operator's key"
                                : "the data dir holds none. A first start needs the signed roster there "
                                  "(meshctl roster sign)";
  }
  return out;
}

std::optional<Membership> check_membership(const Roster& roster, const std::string& node_id,
                                           const PublicKey& node_key) {
  const ServerEntry* self = roster.find(node_id);
  if (self == nullptr) {
    for (const ServerEntry& server : roster.servers) {
      if (server.key == node_key) {
        return Membership{MembershipProblem::not_in_roster,
                          "the roster (version " + std::to_string(roster.version) + ") has no server '" + node_id +
                              "', but lists this node's key " + hex(node_key) + " as server '" + server.id +
                              "': set node_id = \"" + server.id + "\", or fix the roster"};
      }
    }
    return Membership{MembershipProblem::not_in_roster,
                      "the roster (version " + std::to_string(roster.version) + ") has no server '" + node_id +
                          "' (this node's key is " + hex(node_key) + "): add it to the roster, or fix node_id"};
  }
  if (self->key != node_key) {
    return Membership{MembershipProblem::key_mismatch,
                      "the roster (version " + std::to_string(roster.version) + ") lists server '" + node_id +
                          "' with key " + hex(self->key) + ", but this node's key file holds " + hex(node_key) +
                          ": point key_file at that server's key, or put this key in the roster"};
  }
  return std::nullopt;
}

std::optional<std::string> gossip_endpoint_mismatch(const Endpoint& roster_gossip, const Endpoint& listen) {
  const bool any_address = listen.host == "0.0.0.0" || listen.host == "::";
  const bool roster_ip = roster_gossip.host.find_first_not_of("0123456789.") == std::string::npos ||
                         roster_gossip.host.find(':') != std::string::npos;
  const bool port_differs = roster_gossip.port != listen.port;
  const bool host_differs = !any_address && roster_ip && roster_gossip.host != listen.host;
  if (!port_differs && !host_differs) return std::nullopt;
  return "the roster's gossip endpoint for this node is " + format_endpoint(roster_gossip) + ", but [gossip] listen is " +
         format_endpoint(listen) + ": peers connect to the roster's endpoint, so " +
         (port_differs ? "the ports should match" : "the addresses should match") +
         " (unless a port forward or NAT joins them)";
}

}  // namespace mesh::node

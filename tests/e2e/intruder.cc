// meshnode-e2e-intruder: the hostile process of the end-to-end suite's
// scenario 10, run on a host of its own. It sends every member of the
// current roster, over the members' real gossip ports:
//   1. as a non-member (a key of its own): sealed frames carrying a forged
//      report, and one frame of garbage;
//   2. as the member whose key file it is given (that member's daemon is
//      stopped meanwhile): one valid frame of that member's last boot at a
//      counter above anything that boot sent, carrying the operator's old
//      roster, a report forged for another member and one for a server that
//      does not exist; that same frame again (replayed); then frames of the
//      same boot with low counters (old frames, replayed).
// Frames are sealed here from docs/PROTOCOL.md §2 with libsodium directly
// (crypto_kx session keys, XChaCha20-Poly1305-IETF, the header of format 2
// as additional data), not with gossip/link.h: a second implementation of the
// format, and free to pick any counter.
//
//   meshnode-e2e-intruder ROSTER_FILE OLD_ROSTER_FILE MEMBER_KEY_FILE MEMBER_BOOT FORGED_ORIGIN
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sodium.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "gossip/wire.h"
#include "record/envelope.h"
#include "record/keys.h"
#include "record/report.h"
#include "record/roster.h"

namespace {

using namespace mesh;

Bytes read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

void put_u64(std::uint8_t* out, std::uint64_t value) {
  for (int i = 0; i < 8; ++i) out[i] = static_cast<std::uint8_t>(value >> (56 - 8 * i));
}

// Unsigned LEB128, 7 bits a byte, low first (§2).
void put_varint(Bytes& out, std::uint64_t value) {
  for (; value >= 0x80; value >>= 7) out.push_back(static_cast<std::uint8_t>(value | 0x80));
  out.push_back(static_cast<std::uint8_t>(value));
}

// §2: header || XChaCha20-Poly1305-IETF(plaintext) with the sender's tx key
// for this pair; nonce = boot || counter || 8 zero bytes.
Bytes seal(const SecretKey& self, const PublicKey& peer, std::uint64_t boot, std::uint64_t counter,
           const Bytes& plaintext) {
  const PublicKey self_public = self.public_key();
  std::uint8_t self_x_pk[32], self_x_sk[32], peer_x_pk[32], rx[32], tx[32];
  const bool keys = crypto_sign_ed25519_pk_to_curve25519(self_x_pk, self_public.data()) == 0 &&
                    crypto_sign_ed25519_sk_to_curve25519(self_x_sk, self.bytes.data()) == 0 &&
                    crypto_sign_ed25519_pk_to_curve25519(peer_x_pk, peer.data()) == 0 &&
                    (self_public < peer ? crypto_kx_client_session_keys(rx, tx, self_x_pk, self_x_sk, peer_x_pk)
                                        : crypto_kx_server_session_keys(rx, tx, self_x_pk, self_x_sk, peer_x_pk)) == 0;
  if (!keys) {
    std::fprintf(stderr, "no session keys for a roster key\n");
    std::exit(1);
  }
  Bytes frame;
  frame.reserve(25 + plaintext.size() + crypto_aead_xchacha20poly1305_ietf_ABYTES);
  frame.push_back(0xA2);
  frame.insert(frame.end(), self_public.begin(), self_public.begin() + 4);
  put_varint(frame, boot);
  put_varint(frame, counter);
  std::uint8_t nonce[24] = {};
  put_u64(nonce, boot);
  put_u64(nonce + 8, counter);
  const std::size_t header = frame.size();
  frame.resize(header + plaintext.size() + crypto_aead_xchacha20poly1305_ietf_ABYTES);
  unsigned long long sealed = 0;
  crypto_aead_xchacha20poly1305_ietf_encrypt(frame.data() + header, &sealed, plaintext.data(),
                                             plaintext.size(), frame.data(), header, nullptr, nonce, tx);
  frame.resize(header + sealed);
  return frame;
}

// One TCP connection to a member's gossip port; frames length-prefixed (§2a).
class Connection {
 public:
  explicit Connection(const Endpoint& to) {
    fd_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_port = htons(to.port);
    ok_ = ::inet_pton(AF_INET, to.host.c_str(), &address.sin_addr) == 1 &&
          ::connect(fd_, reinterpret_cast<sockaddr*>(&address), sizeof address) == 0;
  }
  ~Connection() { ::close(fd_); }
  bool ok() const { return ok_; }
  void send(const Bytes& frame) {
    Bytes out;
    const auto length = static_cast<std::uint32_t>(frame.size());
    for (int shift = 24; shift >= 0; shift -= 8) out.push_back(static_cast<std::uint8_t>(length >> shift));
    out.insert(out.end(), frame.begin(), frame.end());
    ok_ = ok_ && ::send(fd_, out.data(), out.size(), MSG_NOSIGNAL) == static_cast<ssize_t>(out.size());
  }

 private:
  int fd_ = -1;
  bool ok_ = false;
};

Bytes push_frame(std::uint64_t roster_version, const std::vector<Bytes>& records) {
  gossip::FrameContent content;
  content.roster_version = roster_version;
  for (const Bytes& record : records) content.bodies.push_back(gossip::Body::owned(false, record));
  return gossip::encode_frame_content(content);
}

// A report every target fails in, signed by `key` (not the origin's key).
Bytes forged_report(const Roster& roster, const std::string& origin, const SecretKey& key) {
  Report report;
  report.view.roster_version = roster.version;
  const UnixMs now = static_cast<UnixMs>(::time(nullptr)) * 1000;
  for (std::uint32_t i = 0; i < roster.servers.size(); ++i) {
    if (roster.servers[i].id == origin) continue;
    report.view.results.push_back(ProbeResult{i, 50, 0, now - 1000, 0, ProbeFailure::tcp_timeout});
  }
  return encode_signed_record(RecordKind::report, origin, static_cast<std::uint64_t>(now) * 1000, now,
                              encode_report_payload(report, now), key);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 6 || sodium_init() < 0) {
    std::fprintf(stderr, "usage: %s ROSTER OLD_ROSTER MEMBER_KEY_FILE MEMBER_BOOT FORGED_ORIGIN\n", argv[0]);
    return 2;
  }
  const Bytes roster_raw = read_file(argv[1]);
  const Bytes old_roster_raw = read_file(argv[2]);
  auto envelope = decode_envelope(roster_raw);
  if (!envelope) return 2;
  auto roster = decode_roster_payload(envelope->payload, envelope->seq);
  auto member = load_secret_key_file(argv[3]);
  if (!roster || !member) return 2;
  const std::uint64_t boot = std::stoull(argv[4]);
  const std::string forged_origin = argv[5];
  const KeyPair outsider = generate_key_pair();
  const PublicKey member_public = member->public_key();

  const Bytes forged = forged_report(*roster, forged_origin, outsider.secret_key);
  const Bytes ghost = forged_report(*roster, "ghost-1", outsider.secret_key);
  const Bytes valid_plaintext = push_frame(roster->version, {old_roster_raw, forged, ghost});
  int reached = 0;
  for (const ServerEntry& server : roster->servers) {
    if (server.key == member_public) continue;
    Connection to(server.gossip);
    // 1. A non-member: three sealed frames and one of garbage.
    for (std::uint64_t k = 0; k < 3; ++k) {
      to.send(seal(outsider.secret_key, server.key, 1, k, push_frame(roster->version, {forged})));
    }
    Bytes garbage(200, 0x5A);
    to.send(garbage);
    // 2. The member: one valid frame above anything its last boot sealed,
    // the same frame again, then old frames of that boot (counters far
    // below: before this frame they could have been new to this peer, as
    // a boot's counter runs across all its peers).
    const Bytes valid = seal(*member, server.key, boot, std::uint64_t{1} << 40, valid_plaintext);
    to.send(valid);
    to.send(valid);
    for (std::uint64_t k = 0; k < 3; ++k) {
      to.send(seal(*member, server.key, boot, k, push_frame(roster->version, {})));
    }
    std::printf("%s %s: %s\n", server.id.c_str(), server.gossip.host.c_str(), to.ok() ? "sent" : "FAILED");
    if (to.ok()) ++reached;
  }
  ::sleep(1);  // let the last frames be read before the connections close
  return reached + 1 == static_cast<int>(roster->servers.size()) ? 0 : 1;
}

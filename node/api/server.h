// The API's HTTP server (Boost.Beast; docs/API.md): HTTP/1.1 with keep-alive,
// HTTPS only when a certificate is configured, every bound of
// node/api/limits.h enforced per connection. It carries requests to the
// pure router (node/api/router.h) and its answers back; it reads the node's
// state only through the latest published snapshot and reaches the agent
// only to offer a roster (PUT /v1/roster), through `offer`.
//
// Under a connection flood it keeps serving the clients that present a
// valid token (node/api/admission.h, docs/API.md "Under a connection
// flood"): a cap per source address, and when full the untrusted
// connection that has waited longest, of the greediest source, makes room.
//
// Threading: the listener runs on a strand of `io`, each session on a strand
// of `io` or, when `session_ios` is given, of one of those in turn (one
// io_context per thread: sessions never contend for a scheduler); start(),
// stop() and notify() may be called from any thread. No Asio type here.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "common/result.h"
#include "node/api/http_types.h"
#include "node/api/limits.h"
#include "node/api/server_stats.h"
#include "node/api/snapshot.h"
#include "node/api/tokens.h"
#include "record/roster.h"

namespace boost::asio {
class io_context;
}

namespace mesh::api {

// Where the daemon publishes snapshots and the API reads them, lock-free.
// A read by the API is remembered until the daemon asks (take_read), so
// that the daemon renders its state every tick only while someone reads it
// (docs/API.md, "Freshness").
class SnapshotBox {
 public:
  void publish(std::shared_ptr<const ApiSnapshot> snapshot) { latest_.store(std::move(snapshot)); }
  // The API's read: the latest snapshot, and a note that it was read.
  std::shared_ptr<const ApiSnapshot> latest() const {
    if (!read_.load(std::memory_order_relaxed)) read_.store(true, std::memory_order_relaxed);
    return latest_.load();
  }
  // The daemon's look: no note.
  std::shared_ptr<const ApiSnapshot> peek() const { return latest_.load(); }
  // True when the API read a snapshot since the last call.
  bool take_read() { return read_.exchange(false, std::memory_order_relaxed); }

 private:
  std::atomic<std::shared_ptr<const ApiSnapshot>> latest_;
  mutable std::atomic<bool> read_{false};
};

// The server's time and connection bounds (defaults: node/api/limits.h;
// tests shorten them).
struct ApiLimits {
  DurationMs first_request_ms = kFirstRequestMs;
  DurationMs keep_alive_request_ms = kKeepAliveRequestMs;
  DurationMs write_ms = kWriteMs;
  std::size_t connections_max = kConnectionsMax;
  std::size_t connections_per_address_max = kConnectionsPerAddressMax;
};

struct ApiServerSettings {
  Endpoint listen;             // an IP literal and port (port 0: any)
  std::string tls_cert_file;   // PEM chain; with tls_key_file: HTTPS only
  std::string tls_key_file;
  ApiLimits limits;
};

enum class ApiError {
  bad_address,  // listen is not an IP literal
  bind_failed,  // the address cannot be bound
  tls,          // OpenSSL, the certificate or the key does not load, or they do not match
};

// Hands a roster record to the node and answers with its outcome, later,
// on any thread.
using RosterOffer = std::function<void(std::string raw, std::function<void(ApiResponse)> reply)>;

// A line for the daemon's log when the server starts or stops shedding
// connections (ApiServer::shedding_change).
struct SheddingNote {
  bool started = false;  // true: it began to shed; false: it shed none for a minute
  std::uint64_t shed = 0;  // connections shed since the server started
  std::string message;
};

class ApiServer {
 public:
  ApiServer(boost::asio::io_context& io, ApiServerSettings settings,
            std::shared_ptr<const TokenSet> tokens, const SnapshotBox& snapshots, RosterOffer offer,
            std::vector<boost::asio::io_context*> session_ios = {});
  ~ApiServer();  // stop()
  ApiServer(const ApiServer&) = delete;
  ApiServer& operator=(const ApiServer&) = delete;

  // Loads the certificate (if any), binds and listens; the bound address.
  Result<Endpoint, ApiError> start();
  // Stops accepting and closes every connection. Idempotent.
  void stop();
  // The snapshot's index moved: held long-polls are answered.
  void notify();
  // Replaces the tokens (SIGHUP re-reads the token file); requests routed
  // from now on use them.
  void set_tokens(std::shared_ptr<const TokenSet> tokens);
  ApiServerStats stats() const;
  bool tls() const;
  // When the server began to shed connections since the last call, or has
  // shed none for kSheddingQuietMs after shedding: the line to log. Call
  // from one thread (the daemon's strand, each tick); `now` is its clock.
  std::optional<SheddingNote> shedding_change(UnixMs now);

  struct Impl;

 private:
  std::shared_ptr<Impl> impl_;
};

}  // namespace mesh::api

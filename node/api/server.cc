#include "node/api/server.h"

#include <boost/asio/steady_timer.hpp>

#include <csignal>
#include <mutex>
#include <unordered_map>
#include <vector>

#include "node/api/admission.h"
#include "node/api/session.h"
#include "node/api/tls_library.h"

namespace mesh::api {

// What sessions share with the server; outlives every session that holds it.
struct ServerCore {
  ServerCore(std::shared_ptr<const TokenSet> tokens_in, const SnapshotBox& box, RosterOffer offer_in,
             ApiLimits limits_in)
      : tokens(std::move(tokens_in)),
        snapshots(box),
        offer(std::move(offer_in)),
        limits(limits_in),
        admission({limits_in.connections_max, limits_in.connections_per_address_max}) {}

  std::atomic<std::shared_ptr<const TokenSet>> tokens;
  const SnapshotBox& snapshots;
  RosterOffer offer;
  const ApiLimits limits;
  std::atomic<std::uint64_t> accepted{0}, refused{0}, refused_address{0}, evicted{0}, accept_errors{0},
      requests{0}, rejected{0};
  mutable std::mutex mutex;  // guards the admission table and the two lists below
  Admission admission;
  std::vector<std::weak_ptr<SessionHandle>> waiters;
  std::unordered_map<ConnectionId, std::weak_ptr<SessionHandle>> sessions;
  std::atomic<bool> stopped{false};
};

void count_request(ServerCore& core, bool rejected) {
  ++core.requests;
  if (rejected) ++core.rejected;
}
void register_waiter(ServerCore& core, std::weak_ptr<SessionHandle> session) {
  std::lock_guard lock(core.mutex);
  core.waiters.push_back(std::move(session));
}
void register_session(ServerCore& core, ConnectionId id, std::weak_ptr<SessionHandle> session) {
  std::lock_guard lock(core.mutex);
  core.sessions.emplace(id, std::move(session));
}
void session_trusted(ServerCore& core, ConnectionId id) {
  std::lock_guard lock(core.mutex);
  core.admission.trust(id);
}
void session_waiting(ServerCore& core, ConnectionId id) {
  std::lock_guard lock(core.mutex);
  core.admission.waiting(id);
}
void session_closed(ServerCore& core, ConnectionId id) {
  std::lock_guard lock(core.mutex);
  core.admission.close(id);
  core.sessions.erase(id);
}
bool presents_valid_token(const ServerCore& core, std::string_view authorization) {
  constexpr std::string_view kBearer = "Bearer ";
  return authorization.starts_with(kBearer) &&
         core.tokens.load()->role_of(authorization.substr(kBearer.size())).has_value();
}
ApiServerStats server_stats(const ServerCore& core) {
  ApiServerStats stats{core.accepted, core.refused, core.refused_address, core.evicted, core.accept_errors,
                       core.requests, core.rejected};
  std::lock_guard lock(core.mutex);
  stats.connections_open = core.admission.open();
  stats.connections_trusted = core.admission.trusted();
  return stats;
}
const ApiLimits& server_limits(const ServerCore& core) { return core.limits; }
std::shared_ptr<const ApiSnapshot> latest_snapshot(const ServerCore& core) { return core.snapshots.latest(); }
std::shared_ptr<const TokenSet> server_tokens(const ServerCore& core) { return core.tokens.load(); }
void offer_roster(ServerCore& core, std::string raw, std::function<void(ApiResponse)> reply) {
  core.offer(std::move(raw), std::move(reply));
}

struct ApiServer::Impl : std::enable_shared_from_this<ApiServer::Impl> {
  Impl(boost::asio::io_context& io_context, ApiServerSettings settings_in, std::shared_ptr<ServerCore> core_in,
       std::vector<boost::asio::io_context*> session_ios_in)
      : io(io_context),
        session_ios(std::move(session_ios_in)),
        settings(std::move(settings_in)),
        core(std::move(core_in)),
        strand(boost::asio::make_strand(io_context)),
        acceptor(strand),
        pause_timer(strand) {}

  void do_accept() {
    boost::asio::io_context& session_io =
        session_ios.empty() ? io : *session_ios[next_session_io++ % session_ios.size()];
    acceptor.async_accept(boost::asio::make_strand(session_io),
                          [self = shared_from_this()](beast::error_code error, Tcp::socket socket) {
                            self->on_accept(error, std::move(socket));
                          });
  }

  void on_accept(beast::error_code error, Tcp::socket socket) {
    if (core->stopped || !acceptor.is_open()) return;
    if (error && out_of_resources(error)) {
      // The connection stays in the backlog: accepting again at once would
      // spin. A closing session frees a descriptor meanwhile.
      ++core->accept_errors;
      pause_timer.expires_after(std::chrono::milliseconds(kAcceptPauseMs));
      pause_timer.async_wait([self = shared_from_this()](beast::error_code) { self->do_accept(); });
      return;
    }
    if (!error) admit(std::move(socket));
    do_accept();
  }

  static bool out_of_resources(const beast::error_code& error) {
    return error == boost::asio::error::no_descriptors || error == boost::asio::error::no_buffer_space ||
           error == boost::asio::error::no_memory || error.value() == ENFILE;
  }

  // Admits the connection or closes it (node/api/admission.h); an evicted
  // connection is closed after the lock is let go.
  void admit(Tcp::socket socket) {
    beast::error_code ignored;
    const auto remote = socket.remote_endpoint(ignored);
    if (ignored) return;  // gone already
    AdmitDecision decision;
    std::shared_ptr<SessionHandle> evicted;
    {
      std::lock_guard lock(core->mutex);
      decision = core->admission.admit(source_of(remote.address()));
      if (decision.evict) {
        if (auto it = core->sessions.find(*decision.evict); it != core->sessions.end()) {
          evicted = it->second.lock();
          core->sessions.erase(it);
        }
      }
    }
    if (!decision.admitted()) {
      ++(decision.outcome == AdmitDecision::Outcome::address_full ? core->refused_address : core->refused);
      socket.close(ignored);
      return;
    }
    if (decision.evict) ++core->evicted;
    if (evicted) evicted->close();
    ++core->accepted;
    start_session(std::move(socket), decision.id);
  }

  static SourceAddress source_of(const boost::asio::ip::address& address) {
    if (address.is_v4()) return SourceAddress::v4(address.to_v4().to_uint());
    const auto v6 = address.to_v6();
    if (v6.is_v4_mapped()) return SourceAddress::v4(boost::asio::ip::make_address_v4(boost::asio::ip::v4_mapped, v6).to_uint());
    return SourceAddress::v6(v6.to_bytes());
  }

  void start_session(Tcp::socket socket, ConnectionId id) {
    // Like nginx's tcp_nodelay: a response's last partial segment goes out
    // at once instead of waiting for the client's delayed ACK (Nagle).
    beast::error_code ignored;
    socket.set_option(Tcp::no_delay(true), ignored);
    if (tls) {
      auto session = std::make_shared<TlsSession>(core, id, std::move(socket), *tls);
      register_session(*core, id, session);
      session->run();
    } else {
      auto session = std::make_shared<PlainSession>(core, id, std::move(socket));
      register_session(*core, id, session);
      session->run();
    }
  }

  boost::asio::io_context& io;
  std::vector<boost::asio::io_context*> session_ios;
  std::size_t next_session_io = 0;  // used on the acceptor's strand only
  ApiServerSettings settings;
  std::shared_ptr<ServerCore> core;
  boost::asio::strand<boost::asio::io_context::executor_type> strand;
  Tcp::acceptor acceptor;
  boost::asio::steady_timer pause_timer;  // after an accept that ran out of resources
  std::optional<boost::asio::ssl::context> tls;
  // shedding_change(), on the caller's one thread.
  std::uint64_t shed_seen = 0;
  bool shedding = false;
  UnixMs last_shed_ms = 0;
};

namespace {

Status<ApiError> load_tls(boost::asio::ssl::context& context, const ApiServerSettings& settings) {
  beast::error_code error;
  context.set_options(boost::asio::ssl::context::default_workarounds | boost::asio::ssl::context::no_sslv2 |
                      boost::asio::ssl::context::no_sslv3 | boost::asio::ssl::context::no_tlsv1 |
                      boost::asio::ssl::context::no_tlsv1_1);
  context.use_certificate_chain_file(settings.tls_cert_file, error);
  if (error) {
    return make_error(ApiError::tls, "[api] tls_cert_file '" + settings.tls_cert_file + "': " + error.message());
  }
  context.use_private_key_file(settings.tls_key_file, boost::asio::ssl::context::pem, error);
  if (error) {
    return make_error(ApiError::tls, "[api] tls_key_file '" + settings.tls_key_file + "': " + error.message());
  }
  if (SSL_CTX_check_private_key(context.native_handle()) != 1) {
    return make_error(ApiError::tls, "[api] the TLS key does not match the certificate");
  }
  return Ok{};
}

}  // namespace

ApiServer::ApiServer(boost::asio::io_context& io, ApiServerSettings settings,
                     std::shared_ptr<const TokenSet> tokens, const SnapshotBox& snapshots, RosterOffer offer,
                     std::vector<boost::asio::io_context*> session_ios)
    : impl_(std::make_shared<Impl>(io, settings,
                                   std::make_shared<ServerCore>(std::move(tokens), snapshots, std::move(offer),
                                                                settings.limits),
                                   std::move(session_ios))) {}

ApiServer::~ApiServer() { stop(); }

Result<Endpoint, ApiError> ApiServer::start() {
  Impl& impl = *impl_;
  // sendfile(2) (node/api/shared_body.h) has no MSG_NOSIGNAL: a client that
  // goes away in the middle of a body would raise SIGPIPE and end the
  // process. Like nginx, a process serving the API ignores it (the write
  // then fails with EPIPE and only that connection closes).
  std::signal(SIGPIPE, SIG_IGN);
  if (!impl.settings.tls_cert_file.empty()) {
    if (auto library = load_tls_library(); !library) return make_error(ApiError::tls, "[api] " + library.message());
    impl.tls.emplace(boost::asio::ssl::context::tls_server);
    if (auto loaded = load_tls(*impl.tls, impl.settings); !loaded) return loaded.error();
  }
  beast::error_code error;
  const auto address = boost::asio::ip::make_address(impl.settings.listen.host, error);
  if (error) {
    return make_error(ApiError::bad_address, "[api] listen '" + impl.settings.listen.host + "' is not an IP address");
  }
  const Tcp::endpoint endpoint(address, impl.settings.listen.port);
  impl.acceptor.open(endpoint.protocol(), error);
  if (!error) impl.acceptor.set_option(boost::asio::socket_base::reuse_address(true), error);
  if (!error) impl.acceptor.bind(endpoint, error);
  if (!error) impl.acceptor.listen(boost::asio::socket_base::max_listen_connections, error);
  if (error) {
    return make_error(ApiError::bind_failed,
                      "[api] listen " + format_endpoint(impl.settings.listen) + ": " + error.message());
  }
  const auto bound = impl.acceptor.local_endpoint(error);
  boost::asio::post(impl.strand, [impl = impl_] { impl->do_accept(); });
  return Endpoint{bound.address().to_string(), bound.port()};
}

void ApiServer::stop() {
  if (impl_->core->stopped.exchange(true)) return;
  boost::asio::post(impl_->strand, [impl = impl_] {
    beast::error_code ignored;
    impl->acceptor.close(ignored);
    impl->pause_timer.cancel();
  });
  std::unordered_map<ConnectionId, std::weak_ptr<SessionHandle>> sessions;
  {
    std::lock_guard lock(impl_->core->mutex);
    sessions.swap(impl_->core->sessions);
    impl_->core->waiters.clear();
  }
  for (auto& [id, weak] : sessions) {
    if (auto session = weak.lock()) session->close();
  }
}

void ApiServer::notify() {
  std::vector<std::weak_ptr<SessionHandle>> waiters;
  {
    std::lock_guard lock(impl_->core->mutex);
    waiters.swap(impl_->core->waiters);
  }
  for (auto& weak : waiters) {
    if (auto session = weak.lock()) session->wake();
  }
}

ApiServerStats ApiServer::stats() const { return server_stats(*impl_->core); }

std::optional<SheddingNote> ApiServer::shedding_change(UnixMs now) {
  Impl& impl = *impl_;
  const ApiServerStats stats = server_stats(*impl.core);
  const std::uint64_t shed = stats.shed();
  const bool more = shed > impl.shed_seen;
  impl.shed_seen = shed;
  if (more) impl.last_shed_ms = now;
  if (more && !impl.shedding) {
    impl.shedding = true;
    return SheddingNote{true, shed,
                        "panel API: shedding connections to stay available (" +
                            std::to_string(stats.connections_refused) + " refused at the cap, " +
                            std::to_string(stats.connections_refused_address) + " over the cap of their address, " +
                            std::to_string(stats.connections_evicted) + " untrusted ones evicted so far; " +
                            std::to_string(stats.connections_trusted) + " of " +
                            std::to_string(stats.connections_open) + " open connections hold a valid token)"};
  }
  if (!more && impl.shedding && now - impl.last_shed_ms >= kSheddingQuietMs) {
    impl.shedding = false;
    return SheddingNote{false, shed,
                        "panel API: no connection shed for " + std::to_string(kSheddingQuietMs / 1000) + " s (" +
                            std::to_string(shed) + " shed since start)"};
  }
  return std::nullopt;
}

bool ApiServer::tls() const { return impl_->tls.has_value(); }

void ApiServer::set_tokens(std::shared_ptr<const TokenSet> tokens) { impl_->core->tokens.store(std::move(tokens)); }

}  // namespace mesh::api

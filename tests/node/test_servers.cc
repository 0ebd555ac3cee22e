#include "tests/node/test_servers.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <openssl/evp.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>
#include <sys/socket.h>
#include <unistd.h>

#include <array>
#include <stdexcept>

#include <boost/asio/read.hpp>
#include <boost/asio/ssl/stream.hpp>
#include <boost/asio/write.hpp>

namespace mesh::test {
namespace {

using tcp = boost::asio::ip::tcp;
constexpr long kCertificateValidSeconds = 24 * 3600;
constexpr std::string_view kGarbageAnswer = "HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n\r\n";

// A self-signed EC P-256 certificate for CN=localhost, made once per process.
struct Identity {
  EVP_PKEY* key = nullptr;
  X509* certificate = nullptr;
};

const Identity& identity() {
  static const Identity made = [] {
    Identity id;
    id.key = EVP_EC_gen("P-256");
    id.certificate = X509_new();
    if (id.key == nullptr || id.certificate == nullptr) throw std::runtime_error("OpenSSL keygen");
    X509_set_version(id.certificate, 2);
    ASN1_INTEGER_set(X509_get_serialNumber(id.certificate), 1);
    X509_gmtime_adj(X509_getm_notBefore(id.certificate), 0);
    X509_gmtime_adj(X509_getm_notAfter(id.certificate), kCertificateValidSeconds);
    X509_set_pubkey(id.certificate, id.key);
    X509_NAME* name = X509_get_subject_name(id.certificate);
    X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_ASC,
                               reinterpret_cast<const unsigned char*>("localhost"), -1, -1, 0);
    X509_set_issuer_name(id.certificate, name);
    if (X509_sign(id.certificate, id.key, EVP_sha256()) == 0) throw std::runtime_error("X509_sign");
    return id;
  }();
  return made;
}

int on_servername(SSL* ssl, int* alert, void* arg) {
  auto* server = static_cast<TestServer*>(arg);
  const char* name = SSL_get_servername(ssl, TLSEXT_NAMETYPE_host_name);
  server->on_servername(name != nullptr ? name : "");
  if (server->mode() != ServerMode::tls_alert) return SSL_TLSEXT_ERR_OK;
  *alert = SSL_AD_UNRECOGNIZED_NAME;
  return SSL_TLSEXT_ERR_ALERT_FATAL;
}

int on_alpn(SSL*, const unsigned char**, unsigned char*, const unsigned char* in,
            unsigned int in_bytes, void* arg) {
  std::vector<std::string> offered;
  for (unsigned int at = 0; at < in_bytes;) {
    const unsigned int length = in[at];
    offered.emplace_back(reinterpret_cast<const char*>(in + at + 1), length);
    at += 1 + length;
  }
  static_cast<TestServer*>(arg)->on_alpn(std::move(offered));
  return SSL_TLSEXT_ERR_NOACK;  // record only; no protocol is selected
}

boost::asio::ssl::context make_server_context(TestServer* server) {
  boost::asio::ssl::context tls(boost::asio::ssl::context::tls_server);
  SSL_CTX* ctx = tls.native_handle();
  SSL_CTX_use_certificate(ctx, identity().certificate);
  SSL_CTX_use_PrivateKey(ctx, identity().key);
  SSL_CTX_set_tlsext_servername_callback(ctx, on_servername);
  SSL_CTX_set_tlsext_servername_arg(ctx, server);
  SSL_CTX_set_alpn_select_cb(ctx, on_alpn, server);
  if (server->mode() == ServerMode::tls_large_flight) {
    for (int i = 0; i < 7; ++i) SSL_CTX_add_extra_chain_cert(ctx, X509_dup(identity().certificate));
  }
  if (server->mode() == ServerMode::tls12_only) {
    SSL_CTX_set_max_proto_version(ctx, TLS1_2_VERSION);
  }
  if (server->mode() == ServerMode::tls_hello_retry) {
    SSL_CTX_set1_groups_list(ctx, "P-256");
  }
  return tls;
}

bool is_established(int fd) {
  tcp_info info{};
  socklen_t size = sizeof info;
  if (::getsockopt(fd, IPPROTO_TCP, TCP_INFO, &info, &size) != 0) return false;
  return info.tcpi_state == TCP_ESTABLISHED;
}

}  // namespace

// One accepted connection; the socket lives as long as the server.
struct Connection {
  explicit Connection(tcp::socket accepted) : socket(std::move(accepted)) {}
  tcp::socket socket;
  std::unique_ptr<boost::asio::ssl::stream<tcp::socket&>> tls;
  std::array<char, 4096> buffer{};
};


TestServer::TestServer(boost::asio::io_context& io, ServerMode mode)
    : mode_(mode), tls_(make_server_context(this)), acceptor_(io) {
  const tcp::endpoint local(boost::asio::ip::make_address("127.0.0.1"), 0);
  acceptor_.open(local.protocol());
  acceptor_.set_option(tcp::acceptor::reuse_address(true));
  acceptor_.bind(local);
  acceptor_.listen();
  port_ = acceptor_.local_endpoint().port();
  do_accept();
}

TestServer::~TestServer() {
  boost::system::error_code ignored;
  acceptor_.close(ignored);
  for (auto& connection : connections_) connection->socket.close(ignored);
}

void TestServer::do_accept() {
  acceptor_.async_accept(peer_,
                         [this](const boost::system::error_code& error, tcp::socket socket) {
                           if (error) return;
                           on_accept(std::move(socket));
                           do_accept();
                         });
}

void TestServer::on_accept(tcp::socket socket) {
  ++accepted_;
  last_peer_address_ = peer_.address().to_string();  // the socket may be reset already
  auto connection = std::make_shared<Connection>(std::move(socket));
  connections_.push_back(connection);
  open_max_ = std::max(open_max_, count_open());
  if (mode_ == ServerMode::tls || mode_ == ServerMode::tls_alert ||
      mode_ == ServerMode::tls_large_flight || mode_ == ServerMode::tls12_only ||
      mode_ == ServerMode::tls_hello_retry) {
    serve_tls(connection);
  } else {
    serve_plain(connection);
  }
}

// Counted at accept time, after the kernel has processed every RST that
// came before this SYN (loopback delivers in order).
std::size_t TestServer::count_open() {
  std::size_t open = 0;
  for (const auto& connection : connections_) {
    if (connection->socket.is_open() && is_established(connection->socket.native_handle())) ++open;
  }
  return open;
}

void TestServer::serve_plain(const std::shared_ptr<Connection>& connection) {
  if (mode_ == ServerMode::hold) {
    drain(connection, true);
    return;
  }
  connection->socket.async_read_some(
      boost::asio::buffer(connection->buffer),
      [this, connection](const boost::system::error_code& error, std::size_t) {
        if (error) return;
        boost::system::error_code ignored;
        if (mode_ == ServerMode::reset_after_hello) {
          connection->socket.set_option(tcp::socket::linger(true, 0), ignored);
          connection->socket.close(ignored);
          return;
        }
        boost::asio::async_write(connection->socket, boost::asio::buffer(kGarbageAnswer),
                                 [this, connection](const boost::system::error_code& write_error,
                                              std::size_t) {
                                   if (!write_error) drain(connection, false);
                                 });
      });
}

void TestServer::serve_tls(const std::shared_ptr<Connection>& connection) {
  connection->tls =
      std::make_unique<boost::asio::ssl::stream<tcp::socket&>>(connection->socket, tls_);
  connection->tls->async_handshake(boost::asio::ssl::stream_base::server,
                                   [this, connection](const boost::system::error_code& error) {
                                     if (!error) ++handshakes_completed_;
                                   });
}

// Reads and discards until the peer goes away.
void TestServer::drain(const std::shared_ptr<Connection>& connection, bool first) {
  connection->socket.async_read_some(
      boost::asio::buffer(connection->buffer),
      [this, connection, first](const boost::system::error_code& error, std::size_t) {
        if (error) return;
        if (first) ++talked_;
        drain(connection, false);
      });
}

std::uint16_t closed_port() {
  boost::asio::io_context io;
  tcp::acceptor acceptor(io, tcp::endpoint(boost::asio::ip::make_address("127.0.0.1"), 0));
  const std::uint16_t port = acceptor.local_endpoint().port();
  acceptor.close();
  return port;
}

namespace {

sockaddr_in loopback(std::uint16_t port) {
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_port = htons(port);
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  return address;
}

}  // namespace

// backlog 0: the accept queue holds one connection; once it is there
// (the first, blocking connect), Linux drops every further SYN.
FullBacklogListener::FullBacklogListener() {
  constexpr int kFillersNonBlocking = 2;
  const int listener = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  fds_.push_back(listener);
  sockaddr_in address = loopback(0);
  socklen_t size = sizeof address;
  if (::bind(listener, reinterpret_cast<sockaddr*>(&address), size) != 0 ||
      ::listen(listener, 0) != 0 ||
      ::getsockname(listener, reinterpret_cast<sockaddr*>(&address), &size) != 0) {
    throw std::runtime_error("FullBacklogListener: cannot listen");
  }
  port_ = ntohs(address.sin_port);
  const int first = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  fds_.push_back(first);
  if (::connect(first, reinterpret_cast<sockaddr*>(&address), size) != 0) {
    throw std::runtime_error("FullBacklogListener: first connect");
  }
  for (int i = 0; i < kFillersNonBlocking; ++i) {
    const int filler = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    fds_.push_back(filler);
    ::connect(filler, reinterpret_cast<sockaddr*>(&address), size);  // EINPROGRESS, forever
  }
}

FullBacklogListener::~FullBacklogListener() {
  for (const int fd : fds_) ::close(fd);
}

}  // namespace mesh::test

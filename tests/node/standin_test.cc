// meshnode-standin (tools/standin): the block-file parser and reloads, then
// the program as a real process: TLS handshakes with an SNI, a reset and a
// dropped client, many idle clients at once, and the stand-in service.
#include <doctest/doctest.h>

#include <boost/asio/connect.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/ssl.hpp>
#include <cstdio>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include "tests/node/net_util.h"
#include "tests/node/spawned_process.h"
#include "tests/tools/run_process.h"
#include "tools/standin/block_file.h"
#include "tools/standin/block_list.h"

using namespace mesh;
using namespace mesh::standin;
using namespace std::chrono_literals;
namespace asio = boost::asio;

namespace {

const std::string kStandin = MESHNODE_STANDIN_PATH;
// Generous bounds for a loaded 2-core machine; the polls end as soon as
// the condition holds.
constexpr auto kStartTimeout = 10'000ms;
constexpr auto kReloadTimeout = 5'000ms;  // the file is polled once a second

bool contains(const std::string& text, const std::string& fragment) {
  return text.find(fragment) != std::string::npos;
}

// Replaces `path` in one step (rename), so a reload never sees half a file.
void write_file(const std::string& path, const std::string& text) {
  std::string temporary = path + ".tmp";
  std::ofstream(temporary, std::ios::trunc) << text;
  REQUIRE(std::rename(temporary.c_str(), path.c_str()) == 0);
}

enum class Handshake { completed, reset, timed_out, failed };

const char* to_string(Handshake outcome) {
  switch (outcome) {
    case Handshake::completed: return "completed";
    case Handshake::reset: return "reset";
    case Handshake::timed_out: return "timed_out";
    case Handshake::failed: return "failed";
  }
  return "?";
}

struct HandshakeResult {
  Handshake outcome = Handshake::failed;
  std::string error;    // what failed
  std::string subject;  // the server certificate's subject, when completed
};

// A TLS client like a probe: TCP connect to 127.0.0.1:port, then a TLS
// handshake sending `sni`, no certificate verification; all within `timeout`.
HandshakeResult tls_handshake(std::uint16_t port, const std::string& sni,
                              std::chrono::milliseconds timeout) {
  asio::io_context io;
  asio::ssl::context tls(asio::ssl::context::tls_client);
  tls.set_verify_mode(asio::ssl::verify_none);
  asio::ssl::stream<asio::ip::tcp::socket> stream(io, tls);
  REQUIRE(SSL_set_tlsext_host_name(stream.native_handle(), sni.c_str()) == 1);
  std::optional<boost::system::error_code> done;
  asio::ip::tcp::endpoint server(asio::ip::make_address("127.0.0.1"), port);
  stream.next_layer().async_connect(server, [&](const boost::system::error_code& error) {
    if (error) {
      done = error;
      return;
    }
    stream.async_handshake(asio::ssl::stream_base::client,
                           [&](const boost::system::error_code& e) { done = e; });
  });
  io.run_for(timeout);
  HandshakeResult result;
  if (!done) {
    result.outcome = Handshake::timed_out;
    return result;
  }
  result.error = done->message();
  if (!*done) {
    result.outcome = Handshake::completed;
    X509* cert = SSL_get1_peer_certificate(stream.native_handle());
    if (cert != nullptr) {
      char subject[256] = {};
      X509_NAME_oneline(X509_get_subject_name(cert), subject, sizeof subject);
      result.subject = subject;
      X509_free(cert);
    }
  } else if (*done == asio::error::connection_reset) {
    result.outcome = Handshake::reset;
  }
  return result;
}

// A running `meshnode-standin listen` on 127.0.0.1:<free port>.
struct Listener {
  test::TempDir dir;
  std::uint16_t port = test::free_port();
  std::string address = "127.0.0.1:" + std::to_string(port);
  std::string block_file = dir.file("block.txt");
  std::unique_ptr<test::SpawnedProcess> process;

  explicit Listener(const std::string& deadline_ms = "10000") {
    process = std::make_unique<test::SpawnedProcess>(
        std::vector<std::string>{kStandin, "listen", "--address", address, "--block-file",
                                 block_file, "--deadline-ms", deadline_ms},
        dir.file("out"), dir.file("err"));
    REQUIRE_MESSAGE(process->wait_for_err("listening on " + address, kStartTimeout),
                    process->err_text());
    REQUIRE(test::wait_for_port("127.0.0.1", port, kStartTimeout));
  }

  // Writes the block file and waits for the reload line `expected`, seen
  // `times` times in all.
  void block(const std::string& text, const std::string& expected, int times = 1) {
    write_file(block_file, text);
    REQUIRE_MESSAGE(process->wait_for_err(expected, kReloadTimeout, times), process->err_text());
  }
};

}  // namespace

TEST_CASE("block list: drop and reset lines, comments, any textual form of an address") {
  auto list = parse_block_list(
      "# censor rules\n"
      "\n"
      "reset 127.0.0.1\n"
      "  drop\t192.0.2.7   # trailing comment\n"
      "drop 2001:DB8:0:0::9\r\n"
      "reset ::ffff:198.51.100.1\n");
  REQUIRE_MESSAGE(list.ok(), list.message());
  CHECK(list->size() == 4);
  CHECK(list->count(BlockAction::drop) == 2);
  CHECK(list->count(BlockAction::reset) == 2);
  CHECK(list->action_for("127.0.0.1") == BlockAction::reset);
  CHECK(list->action_for("::ffff:127.0.0.1") == BlockAction::reset);  // a dual-stack socket's view
  CHECK(list->action_for("192.0.2.7") == BlockAction::drop);
  CHECK(list->action_for("2001:db8::9") == BlockAction::drop);
  CHECK(list->action_for("198.51.100.1") == BlockAction::reset);
  CHECK(list->action_for("192.0.2.8") == BlockAction::none);
  CHECK(list->action_for("not an address") == BlockAction::none);
  CHECK(parse_block_list("")->empty());
  CHECK(parse_block_list("# nothing\n\n   \n")->empty());
}

TEST_CASE("block list: a bad line is an error naming it") {
  struct Case {
    const char* text;
    BlockListError code;
    const char* message;
  };
  for (const Case& c : {
           Case{"reset 127.0.0.1\ndorp 127.0.0.2\n", BlockListError::bad_line,
                "line 2: unknown action 'dorp' (drop or reset)"},
           Case{"drop\n", BlockListError::bad_line, "line 1: expected 'drop <ip address>'"},
           Case{"reset 127.0.0.1 127.0.0.2\n", BlockListError::bad_line,
                "line 1: expected 'reset <ip address>'"},
           Case{"#\n\ndrop example.com\n", BlockListError::bad_line,
                "line 3: 'example.com' is not an IP address"},
           Case{"drop 127.0.0.1/8\n", BlockListError::bad_line, "line 1: '127.0.0.1/8' is not"},
           Case{"drop 127.0.0.1:443\n", BlockListError::bad_line, "line 1: '127.0.0.1:443' is"},
           Case{"DROP 127.0.0.1\n", BlockListError::bad_line, "line 1: unknown action 'DROP'"},
           Case{"drop 127.0.0.1\nreset 127.0.0.1\n", BlockListError::duplicate,
                "line 2: 127.0.0.1 is listed twice"},
           Case{"drop ::ffff:10.0.0.1\ndrop 10.0.0.1\n", BlockListError::duplicate,
                "line 2: 10.0.0.1 is listed twice"},
       }) {
    CAPTURE(c.text);
    auto list = parse_block_list(c.text);
    REQUIRE(!list.ok());
    CHECK(list.code() == c.code);
    CHECK_MESSAGE(contains(list.message(), c.message), list.message());
  }
  auto huge = parse_block_list(std::string(kBlockFileBytesMax + 1, '#'));
  REQUIRE(!huge.ok());
  CHECK(huge.code() == BlockListError::too_large);
}

TEST_CASE("block file: reloads on change only; a bad file keeps the previous list") {
  test::TempDir dir;
  BlockFile file(dir.file("block.txt"));
  CHECK(contains(file.refresh(false), "absent, no blocks (0 drop, 0 reset)"));
  CHECK(file.refresh(false).empty());  // nothing changed
  write_file(dir.file("block.txt"), "reset 127.0.0.1\ndrop 127.0.0.2\n");
  CHECK(contains(file.refresh(false), "loaded (1 drop, 1 reset)"));
  CHECK(file.refresh(false).empty());
  CHECK(contains(file.refresh(true), "loaded (1 drop, 1 reset)"));  // SIGHUP

  write_file(dir.file("block.txt"), "reset 127.0.0.1\nreset 127.0.0.3 oops\n");
  std::string line = file.refresh(false);
  CHECK_MESSAGE(contains(line,
                         "line 2: expected 'reset <ip address>'; keeping the previous list "
                         "(1 drop, 1 reset)"),
                line);
  CHECK(file.list().action_for("127.0.0.2") == BlockAction::drop);
  CHECK(file.list().action_for("127.0.0.3") == BlockAction::none);

  std::remove(dir.file("block.txt").c_str());
  CHECK(contains(file.refresh(false), "absent"));
  CHECK(file.list().empty());
}

TEST_CASE("standin listen: a TLS handshake with an SNI completes, reset and drop block it") {
  Listener listener;
  CHECK(listener.process->wait_for_err("absent, no blocks", kReloadTimeout));

  HandshakeResult open = tls_handshake(listener.port, "www.example.com", 5'000ms);
  CHECK_MESSAGE(open.outcome == Handshake::completed, to_string(open.outcome), " ", open.error);
  CHECK(open.subject == "/CN=" + listener.address);
  CHECK(tls_handshake(listener.port, "cdn.other.example", 5'000ms).outcome == Handshake::completed);

  // Picked up by the once-a-second mtime check (no signal).
  listener.block("# censor\nreset 127.0.0.1\n", "loaded (0 drop, 1 reset)");
  HandshakeResult reset = tls_handshake(listener.port, "www.example.com", 5'000ms);
  CHECK_MESSAGE(reset.outcome == Handshake::reset, to_string(reset.outcome), " ", reset.error);

  // SIGHUP re-reads at once (the poll would too, within a second).
  write_file(listener.block_file, "drop 127.0.0.1\n");
  listener.process->signal(SIGHUP);
  REQUIRE(listener.process->wait_for_err("loaded (1 drop, 0 reset)", kReloadTimeout));
  HandshakeResult dropped = tls_handshake(listener.port, "www.example.com", 700ms);
  CHECK_MESSAGE(dropped.outcome == Handshake::timed_out, to_string(dropped.outcome));
  // A user-space listener cannot drop SYNs: the bare TCP connect succeeds.
  CHECK(test::port_accepts("127.0.0.1", listener.port));

  // A bad file leaves the drop in force.
  listener.block("drop 127.0.0.1\ndorp 127.0.0.2\n",
                 "line 2: unknown action 'dorp' (drop or reset); keeping the previous list "
                 "(1 drop, 0 reset)");
  CHECK(tls_handshake(listener.port, "www.example.com", 700ms).outcome == Handshake::timed_out);

  // No file, no blocks.
  std::remove(listener.block_file.c_str());
  REQUIRE(listener.process->wait_for_err("absent, no blocks", kReloadTimeout, 2));
  CHECK(tls_handshake(listener.port, "www.example.com", 5'000ms).outcome == Handshake::completed);

  listener.process->signal(SIGTERM);
  std::optional<int> status = listener.process->wait_exit(5'000ms);
  REQUIRE(status.has_value());
  CHECK(WIFEXITED(*status));
  CHECK(WEXITSTATUS(*status) == 0);
  CHECK(contains(listener.process->err_text(), "stopped: "));
}

TEST_CASE("standin listen: idle clients do not hold up others; the deadline closes them") {
  Listener listener("1000");
  std::vector<int> idle;
  for (int i = 0; i < 64; ++i) {
    int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in address = test::loopback_address("127.0.0.1", listener.port);
    REQUIRE(::connect(fd, reinterpret_cast<sockaddr*>(&address), sizeof address) == 0);
    idle.push_back(fd);
  }
  HandshakeResult result = tls_handshake(listener.port, "www.example.com", 5'000ms);
  CHECK_MESSAGE(result.outcome == Handshake::completed, to_string(result.outcome), " ",
                result.error);
  // Each idle client is closed at its 1 s deadline: reading sees the end.
  for (int fd : idle) {
    timeval limit{5, 0};
    ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &limit, sizeof limit);
    char byte = 0;
    CHECK(::read(fd, &byte, 1) == 0);
    ::close(fd);
  }
  listener.process->signal(SIGINT);
  std::optional<int> status = listener.process->wait_exit(5'000ms);
  REQUIRE(status.has_value());
  CHECK(WEXITSTATUS(*status) == 0);
}

TEST_CASE("standin service: /proc/PID/comm is the name; SIGTERM ends it") {
  test::TempDir dir;
  std::string pid_file = dir.file("service.pid");
  test::SpawnedProcess service(
      {kStandin, "service", "--name", "xray-standin", "--pid-file", pid_file}, dir.file("out"),
      dir.file("err"));
  REQUIRE_MESSAGE(service.wait_for_err("running", kStartTimeout), service.err_text());
  std::ifstream comm("/proc/" + std::to_string(service.pid()) + "/comm");
  std::string name;
  std::getline(comm, name);
  CHECK(name == "xray-standin");
  std::ifstream pid_in(pid_file);
  int pid = 0;
  pid_in >> pid;
  CHECK(pid == service.pid());

  service.signal(SIGTERM);
  std::optional<int> status = service.wait_exit(5'000ms);
  REQUIRE(status.has_value());
  CHECK(WIFEXITED(*status));
  CHECK(WEXITSTATUS(*status) == 0);
  CHECK(!std::ifstream(pid_file).good());  // removed at exit
}

TEST_CASE("standin: usage errors exit 2 with a message") {
  struct Case {
    std::vector<std::string> args;
    std::string message;
  };
  for (const Case& c : std::vector<Case>{
           {{"service", "--name", "a-name-of-16-bytes"}, "must be 1..15 bytes"},
           {{"service", "--name", "a/b"}, "no '/'"},
           {{"service"}, "--name is required"},
           {{"listen"}, "--address is required"},
           {{"listen", "--address", "localhost:8443"}, "is not IP:port"},
           {{"listen", "--address", "127.0.0.1"}, "is not IP:port"},
           {{"listen", "--address", "127.0.0.1:0"}, "is not IP:port"},
           {{"listen", "--address", "::1:8443"}, "is not IP:port"},
           {{"listen", "--address", "127.0.0.1:8443", "--deadline-ms", "5"}, "deadline"},
           {{"probe"}, ""},
           {{}, ""},
       }) {
    std::vector<std::string> argv = {kStandin};
    argv.insert(argv.end(), c.args.begin(), c.args.end());
    test::ProcessResult result = test::run_process(argv);
    CAPTURE(result.err);
    CHECK(result.exit_code == 2);
    CHECK(contains(result.err, c.message));
  }
  // The port is taken: a clear message, exit 2.
  Listener first;
  test::ProcessResult second = test::run_process({kStandin, "listen", "--address", first.address});
  CHECK(second.exit_code == 2);
  CHECK(contains(second.err, "cannot listen on " + first.address));
}

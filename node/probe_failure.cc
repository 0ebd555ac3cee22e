#include "node/probe_failure.h"

#include <boost/asio/error.hpp>

namespace mesh::node {

ProbeFailure classify_connect_error(const boost::system::error_code& error) {
  if (error == boost::asio::error::connection_refused) return ProbeFailure::tcp_refused;
  if (error == boost::asio::error::timed_out) return ProbeFailure::tcp_timeout;
  return ProbeFailure::tcp_unreachable;
}

// Whatever broke it, a connection lost in the TLS stage is what a reset
// by a censor looks like from here (a censor's RST, or a FIN it forged).
ProbeFailure classify_handshake_error(const boost::system::error_code& /*error*/) {
  return ProbeFailure::tls_reset;
}

}  // namespace mesh::node

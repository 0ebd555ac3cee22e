// How the prober turns a socket error into exactly one reason of the
// closed vocabulary (record/report.h, docs/PROTOCOL.md "Failure reasons").
// Deadlines are not errors here: the prober maps an expired connect
// deadline to tcp_timeout and an expired TLS deadline to tls_timeout itself;
// the TLS stage's tls_alert and tls_bad_peer come from what the server sent
// (node/tls_hello.h).
#pragma once

#include <boost/system/error_code.hpp>

#include "record/report.h"

namespace mesh::node {

// A failed TCP connect. ECONNREFUSED → tcp_refused; ETIMEDOUT (the kernel
// gave up on its SYNs) → tcp_timeout; everything else (ENETUNREACH,
// EHOSTUNREACH, EADDRNOTAVAIL, a failed bind of the source address, a
// resolution failure, ...) → tcp_unreachable: the path to the server is not
// there. REQUIRES: error is set.
ProbeFailure classify_connect_error(const boost::system::error_code& error);

// A socket error in the TLS stage, after TCP connected, before the
// server's answer was decided: the connection reset or closed (ECONNRESET,
// EPIPE, EOF) or broken otherwise → tls_reset. REQUIRES: error is set.
ProbeFailure classify_handshake_error(const boost::system::error_code& error);

}  // namespace mesh::node

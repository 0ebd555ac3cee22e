// How the prober turns a socket or TLS error into exactly one reason of the
// closed vocabulary (record/report.h, docs/PROTOCOL.md "Failure reasons").
// Deadlines are not errors here: the prober maps an expired connect
// deadline to tcp_timeout and an expired TLS deadline to tls_timeout itself.
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

// A failed TLS handshake, after TCP connected. A TLS alert received from the
// server (OpenSSL reason SSL_AD_REASON_OFFSET + alert code) → tls_alert; the
// connection reset or closed before the handshake completed (ECONNRESET,
// EPIPE, EOF, stream_truncated, OpenSSL's "unexpected eof") → tls_reset;
// any other OpenSSL error (wrong version number, packet length too long,
// record layer failure: the peer does not speak TLS) → tls_bad_peer; any
// other system error breaking the connection → tls_reset.
// REQUIRES: error is set.
ProbeFailure classify_handshake_error(const boost::system::error_code& error);

}  // namespace mesh::node

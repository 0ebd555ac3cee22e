#include "node/probe_failure.h"

#include <openssl/err.h>
#include <openssl/ssl.h>

#include <boost/asio/error.hpp>
#include <boost/asio/ssl/error.hpp>

namespace mesh::node {
namespace {

// OpenSSL reports a received alert as reason SSL_AD_REASON_OFFSET + the
// alert's code (one byte), e.g. SSL_R_SSLV3_ALERT_HANDSHAKE_FAILURE = 1040,
// SSL_R_TLSV1_UNRECOGNIZED_NAME = 1112.
constexpr int kAlertReasonFirst = SSL_AD_REASON_OFFSET;
constexpr int kAlertReasonLast = SSL_AD_REASON_OFFSET + 255;

bool is_connection_broken(const boost::system::error_code& error) {
  namespace err = boost::asio::error;
  return error == err::connection_reset || error == err::broken_pipe ||
         error == err::eof || error == err::connection_aborted ||
         error == boost::asio::ssl::error::stream_truncated ||
         error == boost::asio::ssl::error::unspecified_system_error;
}

ProbeFailure classify_openssl_error(unsigned long code) {
  if (ERR_SYSTEM_ERROR(code)) return ProbeFailure::tls_reset;  // an errno inside OpenSSL
  const int reason = ERR_GET_REASON(code);
  if (ERR_GET_LIB(code) == ERR_LIB_SSL) {
    if (reason >= kAlertReasonFirst && reason <= kAlertReasonLast) return ProbeFailure::tls_alert;
    if (reason == SSL_R_UNEXPECTED_EOF_WHILE_READING) return ProbeFailure::tls_reset;
  }
  return ProbeFailure::tls_bad_peer;
}

}  // namespace

ProbeFailure classify_connect_error(const boost::system::error_code& error) {
  if (error == boost::asio::error::connection_refused) return ProbeFailure::tcp_refused;
  if (error == boost::asio::error::timed_out) return ProbeFailure::tcp_timeout;
  return ProbeFailure::tcp_unreachable;
}

ProbeFailure classify_handshake_error(const boost::system::error_code& error) {
  if (is_connection_broken(error)) return ProbeFailure::tls_reset;
  if (error.category() == boost::asio::error::get_ssl_category()) {
    // Asio stores OpenSSL's packed error code (ERR_get_error) in the int.
    return classify_openssl_error(static_cast<unsigned int>(error.value()));
  }
  return ProbeFailure::tls_reset;  // another system error broke the connection mid-handshake
}

}  // namespace mesh::node

// A throw-away TLS identity for the stand-in listener: a P-256 key and a
// self-signed certificate made in memory at start-up (OpenSSL 3). Probes do
// not verify certificates (docs/PROTOCOL.md, "Probes"), so any will do; the
// subject CN is the listen address, to tell stand-ins apart in a capture.
#pragma once

#include <openssl/ssl.h>
#include <openssl/x509.h>

#include <memory>
#include <string>
#include <string_view>

#include "common/result.h"

namespace mesh::standin {

struct PkeyFree {
  void operator()(EVP_PKEY* key) const { EVP_PKEY_free(key); }
};
struct X509Free {
  void operator()(X509* cert) const { X509_free(cert); }
};

struct TlsIdentity {
  std::unique_ptr<EVP_PKEY, PkeyFree> key;
  std::unique_ptr<X509, X509Free> certificate;
};

enum class CertificateError { openssl };

// A new key and a certificate valid from an hour ago for 30 days, signed
// by that key, subject and issuer CN=`common_name` (at most 64 bytes).
Result<TlsIdentity, CertificateError> make_self_signed(std::string_view common_name);

// Installs `identity` in `ctx` (SSL_CTX_use_certificate / _PrivateKey; the
// context takes its own references).
Status<CertificateError> install_identity(SSL_CTX* ctx, const TlsIdentity& identity);

}  // namespace mesh::standin

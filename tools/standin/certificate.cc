#include "tools/standin/certificate.h"

#include <openssl/bn.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/rand.h>

namespace mesh::standin {
namespace {

constexpr long kValidBeforeNowSeconds = 3600;    // tolerates a client's clock skew
constexpr long kValidSeconds = 30L * 24 * 3600;  // a stand-in runs for a demo or a test

// The OpenSSL error queue's first entry, for the message.
Error<CertificateError> openssl_error(const std::string& what) {
  unsigned long code = ERR_get_error();
  char text[256] = "no OpenSSL error queued";
  if (code != 0) ERR_error_string_n(code, text, sizeof text);
  ERR_clear_error();
  return make_error(CertificateError::openssl, what + ": " + text);
}

// A random positive 64-bit serial number (RFC 5280: unique per issuer).
bool set_random_serial(X509* cert) {
  std::unique_ptr<BIGNUM, decltype(&BN_free)> serial(BN_new(), BN_free);
  if (!serial || BN_rand(serial.get(), 64, BN_RAND_TOP_ANY, BN_RAND_BOTTOM_ANY) != 1) return false;
  return BN_to_ASN1_INTEGER(serial.get(), X509_get_serialNumber(cert)) != nullptr;
}

bool set_subject_and_issuer(X509* cert, std::string_view common_name) {
  X509_NAME* name = X509_get_subject_name(cert);
  std::string cn(common_name);
  if (X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_UTF8,
                                 reinterpret_cast<const unsigned char*>(cn.c_str()), -1, -1,
                                 0) != 1) {
    return false;
  }
  return X509_set_issuer_name(cert, name) == 1;
}

}  // namespace

Result<TlsIdentity, CertificateError> make_self_signed(std::string_view common_name) {
  TlsIdentity identity;
  identity.key.reset(EVP_EC_gen("P-256"));
  if (!identity.key) return openssl_error("P-256 key generation");
  identity.certificate.reset(X509_new());
  X509* cert = identity.certificate.get();
  if (cert == nullptr || X509_set_version(cert, 2) != 1 || !set_random_serial(cert)) {
    return openssl_error("certificate");
  }
  if (X509_gmtime_adj(X509_getm_notBefore(cert), -kValidBeforeNowSeconds) == nullptr ||
      X509_gmtime_adj(X509_getm_notAfter(cert), kValidSeconds) == nullptr) {
    return openssl_error("certificate validity");
  }
  if (!set_subject_and_issuer(cert, common_name)) return openssl_error("certificate subject CN");
  if (X509_set_pubkey(cert, identity.key.get()) != 1 ||
      X509_sign(cert, identity.key.get(), EVP_sha256()) == 0) {
    return openssl_error("certificate signature");
  }
  return identity;
}

Status<CertificateError> install_identity(SSL_CTX* ctx, const TlsIdentity& identity) {
  if (SSL_CTX_use_certificate(ctx, identity.certificate.get()) != 1 ||
      SSL_CTX_use_PrivateKey(ctx, identity.key.get()) != 1 || SSL_CTX_check_private_key(ctx) != 1) {
    return openssl_error("installing the certificate");
  }
  return Ok{};
}

}  // namespace mesh::standin

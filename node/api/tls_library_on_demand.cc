// OpenSSL loaded on demand (node/api/tls_library.h), for a lean meshnode.
//
// meshnode is linked with this file instead of libssl and libcrypto. It
// defines each OpenSSL function the program calls (those of Asio's SSL
// stream and context, used by the API's HTTPS in node/api/server.cc and
// session.h, and by the panel client's in node/panel/http_client.cc, which
// verifies the server's certificate and name) as a forwarder to the same function of libssl.so.3, opened by
// load_tls_library(). A new call to OpenSSL anywhere in meshnode fails its
// link with an undefined reference until it is listed here; the headers
// check each signature, since a C function cannot be declared twice with
// different parameters. The program defines these symbols but does not
// export them (it is not linked with -rdynamic), so libssl's own calls into
// libcrypto never reach them.
#include <dlfcn.h>
#include <openssl/bio.h>
#include <openssl/err.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>

#include <array>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <string>

#include "node/api/tls_library.h"

// X(return type, name, parameters, arguments)
#define MESH_OPENSSL_FUNCTIONS(X)                                                                      \
  X(long, BIO_ctrl, (BIO * b, int cmd, long larg, void* parg), (b, cmd, larg, parg))                  \
  X(size_t, BIO_ctrl_pending, (BIO * b), (b))                                                          \
  X(int, BIO_free, (BIO * b), (b))                                                                     \
  X(int, BIO_new_bio_pair, (BIO * *bio1, size_t writebuf1, BIO** bio2, size_t writebuf2),             \
    (bio1, writebuf1, bio2, writebuf2))                                                                \
  X(int, BIO_read, (BIO * b, void* data, int length), (b, data, length))                              \
  X(int, BIO_write, (BIO * b, const void* data, int length), (b, data, length))                       \
  X(void, CRYPTO_free, (void* ptr, const char* file, int line), (ptr, file, line))                      \
  X(void, ERR_clear_error, (void), ())                                                                 \
  X(unsigned long, ERR_get_error, (void), ())                                                          \
  X(const char*, ERR_reason_error_string, (unsigned long e), (e))                                     \
  X(int, SSL_CTX_check_private_key, (const SSL_CTX* ctx), (ctx))                                      \
  X(long, SSL_CTX_ctrl, (SSL_CTX * ctx, int cmd, long larg, void* parg), (ctx, cmd, larg, parg))      \
  X(void, SSL_CTX_free, (SSL_CTX * ctx), (ctx))                                                        \
  X(SSL_verify_cb, SSL_CTX_get_verify_callback, (const SSL_CTX* ctx), (ctx))                          \
  X(int, SSL_CTX_set_default_verify_paths, (SSL_CTX * ctx), (ctx))                                     \
  X(void, SSL_CTX_set_verify, (SSL_CTX * ctx, int mode, SSL_verify_cb callback), (ctx, mode, callback)) \
  X(void*, SSL_CTX_get_default_passwd_cb_userdata, (SSL_CTX * ctx), (ctx))                             \
  X(void*, SSL_CTX_get_ex_data, (const SSL_CTX* ctx, int index), (ctx, index))                         \
  X(SSL_CTX*, SSL_CTX_new, (const SSL_METHOD* method), (method))                                      \
  X(void, SSL_CTX_set_default_passwd_cb_userdata, (SSL_CTX * ctx, void* u), (ctx, u))                  \
  X(int, SSL_CTX_set_ex_data, (SSL_CTX * ctx, int index, void* data), (ctx, index, data))              \
  X(uint64_t, SSL_CTX_set_options, (SSL_CTX * ctx, uint64_t options), (ctx, options))                  \
  X(int, SSL_CTX_use_PrivateKey_file, (SSL_CTX * ctx, const char* file, int type), (ctx, file, type))  \
  X(int, SSL_CTX_use_certificate_chain_file, (SSL_CTX * ctx, const char* file), (ctx, file))           \
  X(int, SSL_accept, (SSL * ssl), (ssl))                                                               \
  X(int, SSL_connect, (SSL * ssl), (ssl))                                                              \
  X(long, SSL_ctrl, (SSL * ssl, int cmd, long larg, void* parg), (ssl, cmd, larg, parg))               \
  X(void, SSL_free, (SSL * ssl), (ssl))                                                                \
  X(int, SSL_get_error, (const SSL* ssl, int ret), (ssl, ret))                                         \
  X(void*, SSL_get_ex_data, (const SSL* ssl, int index), (ssl, index))                                 \
  X(int, SSL_get_ex_data_X509_STORE_CTX_idx, (void), ())                                              \
  X(int, SSL_get_verify_mode, (const SSL* ssl), (ssl))                                                 \
  X(int, SSL_get_shutdown, (const SSL* ssl), (ssl))                                                    \
  X(SSL*, SSL_new, (SSL_CTX * ctx), (ctx))                                                             \
  X(int, SSL_read, (SSL * ssl, void* buf, int num), (ssl, buf, num))                                   \
  X(void, SSL_set_bio, (SSL * ssl, BIO* rbio, BIO* wbio), (ssl, rbio, wbio))                           \
  X(int, SSL_set_ex_data, (SSL * ssl, int index, void* data), (ssl, index, data))                      \
  X(void, SSL_set_verify, (SSL * ssl, int mode, SSL_verify_cb callback), (ssl, mode, callback))        \
  X(int, SSL_shutdown, (SSL * ssl), (ssl))                                                             \
  X(int, SSL_write, (SSL * ssl, const void* buf, int num), (ssl, buf, num))                            \
  X(const SSL_METHOD*, TLS_client_method, (void), ())                                                  \
  X(const SSL_METHOD*, TLS_method, (void), ())                                                         \
  X(const SSL_METHOD*, TLS_server_method, (void), ())                                                  \
  X(X509*, X509_STORE_CTX_get_current_cert, (const X509_STORE_CTX* ctx), (ctx))                        \
  X(int, X509_STORE_CTX_get_error_depth, (const X509_STORE_CTX* ctx), (ctx))                           \
  X(void*, X509_STORE_CTX_get_ex_data, (const X509_STORE_CTX* ctx, int index), (ctx, index))           \
  X(int, X509_check_host, (X509 * x, const char* name, size_t length, unsigned int flags, char** peer), \
    (x, name, length, flags, peer))                                                                    \
  X(int, X509_check_ip_asc, (X509 * x, const char* address, unsigned int flags), (x, address, flags))

namespace mesh::api {
namespace {

// The SONAME of OpenSSL 3's libssl (libcrypto comes with it, as its
// dependency). The build checks for OpenSSL 3 (find_package).
constexpr const char* kLibrary = "libssl.so.3";

#define MESH_OPENSSL_INDEX(ret, name, params, args) name,
enum Function : std::size_t { MESH_OPENSSL_FUNCTIONS(MESH_OPENSSL_INDEX) kFunctionCount };
#undef MESH_OPENSSL_INDEX

#define MESH_OPENSSL_NAME(ret, name, params, args) #name,
constexpr std::array<const char*, kFunctionCount> kNames{MESH_OPENSSL_FUNCTIONS(MESH_OPENSSL_NAME)};
#undef MESH_OPENSSL_NAME

struct Loaded {
  std::once_flag once;
  std::array<void*, kFunctionCount> entries{};
  std::string error;  // empty once loaded
};

Loaded& loaded() {
  static Loaded instance;
  return instance;
}

void load(Loaded& state) {
  // RTLD_LOCAL: OpenSSL's symbols stay out of the program's namespace.
  void* handle = dlopen(kLibrary, RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) {
    const char* why = dlerror();
    state.error = std::string("HTTPS needs OpenSSL 3 (") + kLibrary + "), which does not load: " +
                  (why != nullptr ? why : "unknown error");
    return;
  }
  for (std::size_t i = 0; i < kFunctionCount; ++i) {
    void* entry = dlsym(handle, kNames[i]);  // libssl's and, through it, libcrypto's
    if (entry == nullptr) {
      state.error = std::string("HTTPS needs OpenSSL 3: ") + kLibrary + " has no " + kNames[i];
      dlclose(handle);
      state.entries.fill(nullptr);
      return;
    }
    state.entries[i] = entry;
  }
}

// Every forwarder's way in. The API loads the library before it makes its
// TLS context, so reaching here unloaded is a bug, and a failed load is
// then fatal rather than a call through a null pointer.
void* entry(Function function) {
  Loaded& state = loaded();
  std::call_once(state.once, load, std::ref(state));
  if (!state.error.empty()) {
    std::fprintf(stderr, "meshnode: %s (calling %s)\n", state.error.c_str(), kNames[function]);
    std::abort();
  }
  return state.entries[function];
}

}  // namespace

Status<TlsLibraryError> load_tls_library() {
  Loaded& state = loaded();
  std::call_once(state.once, load, std::ref(state));
  if (!state.error.empty()) return make_error(TlsLibraryError::missing, state.error);
  return Ok{};
}

}  // namespace mesh::api

#define MESH_OPENSSL_FORWARD(ret, name, params, args)                                                  \
  extern "C" ret name params {                                                                         \
    return reinterpret_cast<decltype(&::name)>(mesh::api::entry(mesh::api::Function::name)) args;      \
  }
MESH_OPENSSL_FUNCTIONS(MESH_OPENSSL_FORWARD)
#undef MESH_OPENSSL_FORWARD

// OpenSSL for the API's HTTPS and the panel client's (node/panel/http_client.h:
// a panel, a webhook or Telegram over https://), and nothing else in
// meshnode: the probes and the self-check speak their own TLS stage
// (node/tls_hello.h).
//
// A lean meshnode (top-level CMakeLists.txt, MESHNODE_LEAN) is not linked
// with OpenSSL: it loads the system's libssl.so.3 here, when the API is set
// up to serve HTTPS, and a daemon whose API speaks plain HTTP on loopback
// (the default) maps no page of it (docs/PERFORMANCE.md, "Memory"). Loaded, not
// copied in, OpenSSL's security updates still reach the daemon at its next
// start. Every other program (meshctl, the tests) is linked with OpenSSL,
// and for them this only says so.
#pragma once

#include "common/result.h"

namespace mesh::api {

enum class TlsLibraryError {
  missing,  // libssl.so.3, or one of the functions the API calls, is not there
};

// Ok once OpenSSL's functions can be called. Safe to call again and from
// any thread: the first call loads, the others give its outcome.
Status<TlsLibraryError> load_tls_library();

}  // namespace mesh::api

// OpenSSL linked in (node/api/tls_library.h): always there.
#include "node/api/tls_library.h"

namespace mesh::api {

Status<TlsLibraryError> load_tls_library() { return Ok{}; }

}  // namespace mesh::api

// The gossip layer's test vectors (docs/PROTOCOL.md, "Test vectors"): the
// per-direction link keys of two fixed keys, one sealed frame, hash32 of a
// record, the digest of a small record set, and the overlay's ring order.
// Made with the gossip code itself and cross-checked against libsodium
// calls written from the document, so the file pins both.
#pragma once

#include <nlohmann/json.hpp>

namespace mesh {

// `record_vectors`: the records.json array (its roster_ok and report_ok are
// reused). Aborts if the code and the document disagree.
nlohmann::json gossip_vectors(const nlohmann::json& record_vectors);

}  // namespace mesh

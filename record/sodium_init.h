// Internal to record/: libsodium must be initialised once before any use.
#pragma once

namespace mesh {

// Calls sodium_init() exactly once per process (std::call_once); aborts via
// MESH_CHECK if libsodium cannot initialise. Thread-safe; cheap after the
// first call.
void ensure_sodium_initialized();

}  // namespace mesh

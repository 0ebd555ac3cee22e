// Every bound of the API server (docs/API.md, "Limits") and what happens at it.
#pragma once

#include <cstddef>

#include "common/time.h"
#include "record/envelope.h"

namespace mesh::api {

inline constexpr std::size_t kHeaderBytesMax = 8 * 1024;            // request line + headers; over: 431, close
inline constexpr std::size_t kBodyBytesMax = kRecordBytesMax;       // PUT /v1/roster: one record; over: 413, close
inline constexpr DurationMs kFirstRequestMs = 10'000;               // a new connection's first request, whole
inline constexpr DurationMs kKeepAliveRequestMs = 60'000;           // a later request, idle time included
inline constexpr DurationMs kWriteMs = 10'000;                      // a response, written whole
inline constexpr DurationMs kTlsHandshakeMs = 10'000;
inline constexpr std::size_t kRequestsPerConnectionMax = 1'000;     // the last says Connection: close
inline constexpr std::size_t kConnectionsMax = 256;                 // full: see node/api/admission.h
inline constexpr std::size_t kConnectionsPerAddressMax = 32;        // more from one address: closed at once
// accept(2) out of file descriptors (EMFILE, ENFILE) or memory: wait this
// long before the next, instead of spinning on the backlog.
inline constexpr DurationMs kAcceptPauseMs = 100;
// The daemon logs when the API starts to shed connections, and when it has
// shed none for this long.
inline constexpr DurationMs kSheddingQuietMs = 60'000;
// A request refused before its body was read (413, 431, 400): what the
// client still sends is read and dropped this long, or this much, before
// the close, so that the close does not reset the answer away.
inline constexpr DurationMs kLingerMs = 2'000;
inline constexpr std::size_t kLingerBytesMax = kBodyBytesMax;
inline constexpr std::size_t kLingerChunkBytes = 16 * 1024;

}  // namespace mesh::api

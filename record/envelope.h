// The signed record envelope: one msgpack layout for everything that is
// signed (docs/PROTOCOL.md, "Record envelope"). Decoding is strict and
// bounded; a record is accepted only after its signature checks out.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "common/bytes.h"
#include "common/result.h"
#include "common/time.h"
#include "record/keys.h"

namespace mesh {

// Wire values are append-only: never renumber or reuse one.
enum class RecordKind : std::uint8_t {
  roster = 1,  // the operator's signed roster; origin is kOperatorOrigin
  report = 2,  // a node's self-check, metrics and probe view; origin is its server id
};

// The kind's name ("roster", "report"; "unknown" for another value).
const char* to_string(RecordKind kind);

inline constexpr std::uint8_t kEnvelopeFormatVersion = 1;
inline constexpr const char* kOperatorOrigin = "operator";
inline constexpr std::size_t kRosterPayloadBytesMax = 1024 * 1024;
inline constexpr std::size_t kReportPayloadBytesMax = 64 * 1024;
inline constexpr std::size_t kRecordBytesMax = kRosterPayloadBytesMax + 256;

enum class RecordError {
  oversize,            // the record, or one of its fields, is over its limit
  malformed,           // not msgpack, wrong types, missing fields, trailing bytes
  unknown_version,     // format version other than kEnvelopeFormatVersion
  unknown_kind,        // kind not in RecordKind
  bad_signature,       // the signature does not verify against the origin's key
  unknown_origin,      // the origin is not in the current roster
  stale,               // seq not newer than what is held (replay)
  future_timestamp,    // timestamp beyond the allowed clock skew
  invalid_payload,     // the payload does not decode or breaks its rules
};

const char* to_string(RecordError error);

// A decoded envelope. `raw` keeps the exact bytes as received: they are what
// is stored and gossiped, never a re-encoding.
struct Envelope {
  std::uint8_t format_version = kEnvelopeFormatVersion;
  RecordKind kind = RecordKind::report;
  std::string origin;
  std::uint64_t seq = 0;
  UnixMs timestamp_ms = 0;
  Bytes payload;
  Signature signature{};
  Bytes raw;

  // The bytes the signature covers: raw up to the signature field.
  ByteView signed_part() const;
};

// The same fields as Envelope, as views into the bytes given to
// decode_envelope_view: no allocation, no copy. Valid only while those bytes
// live and do not move; for hot paths that decide before they keep.
struct EnvelopeView {
  RecordKind kind = RecordKind::report;
  std::string_view origin;
  std::uint64_t seq = 0;
  UnixMs timestamp_ms = 0;
  ByteView payload;
  Signature signature{};
  ByteView raw;

  ByteView signed_part() const;
};

// Encodes and signs a record. REQUIRES: payload within its kind's limit,
// origin a valid server id or kOperatorOrigin.
Bytes encode_signed_record(RecordKind kind, const std::string& origin, std::uint64_t seq,
                           UnixMs timestamp_ms, ByteView payload, const SecretKey& key);

// Strict structural decode (no signature check): exactly the documented
// layout, nothing after it, every field within its limit.
// Allocates only the result's origin, payload and raw (one copy each).
Result<Envelope, RecordError> decode_envelope(ByteView raw);

// The same checks and errors as decode_envelope, without copying anything.
// The view points into `raw`, which must outlive it.
Result<EnvelopeView, RecordError> decode_envelope_view(ByteView raw);

// Checks the envelope's signature against `key`.
Status<RecordError> verify_envelope(const Envelope& envelope, const PublicKey& key);
Status<RecordError> verify_envelope(const EnvelopeView& envelope, const PublicKey& key);

}  // namespace mesh

// Record envelope codec (docs/PROTOCOL.md, "Record envelope").
//
// Decoding walks the seven elements with the strict msgpack cursor of
// record/msgpack_reader.h, each under its own limit, so that a hostile record
// can neither allocate nor hide which field is wrong, and so that the offset
// of the signature (the end of the signed part) is known exactly. The result
// is first a view into the input (decode_envelope_view); decode_envelope
// copies that view once into an owning Envelope.
#include "record/envelope.h"

#include <msgpack.hpp>

#include <algorithm>
#include <limits>

#include "common/check.h"
#include "common/server_id.h"
#include "record/msgpack_reader.h"

namespace mesh {
namespace {

using msgpack_reader::Reader;
using msgpack_reader::ReadStatus;

constexpr std::size_t kEnvelopeElements = 7;
// The signature is always encoded as bin 8: c4 40 <64 bytes>.
constexpr std::uint8_t kBin8 = 0xc4;
constexpr std::size_t kSignatureFieldBytes = 2 + kSignatureBytes;

constexpr const char* kUint = "non-negative integer";

Error<RecordError> fail(RecordError code, std::string message) {
  return make_error(code, "record: " + std::move(message));
}

std::size_t payload_limit(RecordKind kind) {
  return kind == RecordKind::roster ? kRosterPayloadBytesMax : kReportPayloadBytesMax;
}

// A failed read of one envelope element. Only a whole str or bin over its
// limit is `oversize`; truncation, wrong types and nested containers are
// `malformed`.
Error<RecordError> field_error(ReadStatus status, const char* field, const char* expected,
                               std::size_t limit) {
  switch (status) {
    case ReadStatus::truncated:
      return fail(RecordError::malformed, std::string(field) + ": truncated");
    case ReadStatus::str_too_long:
      return fail(RecordError::oversize, std::string(field) + ": string longer than " +
                                             std::to_string(limit) + " bytes");
    case ReadStatus::bin_too_long:
      return fail(RecordError::oversize,
                  std::string(field) + ": longer than " + std::to_string(limit) + " bytes");
    default:
      return fail(RecordError::malformed, std::string(field) + ": not a " + expected);
  }
}

Result<std::uint64_t, RecordError> read_uint_field(Reader& reader, const char* field) {
  std::uint64_t value = 0;
  ReadStatus status = reader.read_uint(&value);
  if (status != ReadStatus::ok) return field_error(status, field, kUint, 0);
  return value;
}

Status<RecordError> check_origin(RecordKind kind, std::string_view origin) {
  if (kind == RecordKind::roster) {
    if (origin != kOperatorOrigin) {
      return fail(RecordError::malformed,
                  "origin '" + std::string(origin) + "': a roster record must come from 'operator'");
    }
    return Ok{};
  }
  if (origin == kOperatorOrigin || !is_valid_server_id(origin)) {
    return fail(RecordError::malformed, "origin '" + std::string(origin) + "': not a valid server id");
  }
  return Ok{};
}

// Decodes elements 0..4 (version, kind, origin, seq, timestamp) into `out`.
Status<RecordError> decode_header_fields(Reader& reader, EnvelopeView& out) {
  auto version = read_uint_field(reader, "format_version");
  if (!version) return version.error();
  if (*version != kEnvelopeFormatVersion) {
    return fail(RecordError::unknown_version,
                "format_version " + std::to_string(*version) + " is not supported");
  }
  auto kind = read_uint_field(reader, "kind");
  if (!kind) return kind.error();
  if (*kind != 1 && *kind != 2) {
    return fail(RecordError::unknown_kind, "kind " + std::to_string(*kind) + " is unknown");
  }
  out.kind = static_cast<RecordKind>(*kind);

  ReadStatus status = reader.read_str(&out.origin, kServerIdBytesMax);
  if (status != ReadStatus::ok) return field_error(status, "origin", "string", kServerIdBytesMax);
  if (auto checked = check_origin(out.kind, out.origin); !checked) return checked;

  auto seq = read_uint_field(reader, "seq");
  if (!seq) return seq.error();
  if (*seq == 0) return fail(RecordError::malformed, "seq: must be at least 1");
  out.seq = *seq;

  auto timestamp = read_uint_field(reader, "timestamp_ms");
  if (!timestamp) return timestamp.error();
  if (*timestamp > static_cast<std::uint64_t>(std::numeric_limits<UnixMs>::max())) {
    return fail(RecordError::malformed, "timestamp_ms: beyond the signed 64-bit range");
  }
  out.timestamp_ms = static_cast<UnixMs>(*timestamp);
  return Ok{};
}

// Decodes elements 5 and 6 (payload, signature) into `out`.
Status<RecordError> decode_body_fields(Reader& reader, EnvelopeView& out) {
  std::size_t limit = payload_limit(out.kind);
  ReadStatus status = reader.read_bin(&out.payload, limit);
  if (status != ReadStatus::ok) return field_error(status, "payload", "bin", limit);

  if (!reader.at_end() && reader.peek_byte() != kBin8) {
    return fail(RecordError::malformed, "signature: not a bin 8 of 64 bytes");
  }
  ByteView signature;
  status = reader.read_bin(&signature, kSignatureBytes);
  if (status == ReadStatus::bin_too_long) {
    return fail(RecordError::malformed, "signature: longer than 64 bytes");
  }
  if (status != ReadStatus::ok) return field_error(status, "signature", "bin", kSignatureBytes);
  if (signature.size() != kSignatureBytes) {
    return fail(RecordError::malformed,
                "signature: " + std::to_string(signature.size()) + " bytes, expected 64");
  }
  std::copy(signature.begin(), signature.end(), out.signature.begin());
  return Ok{};
}

Status<RecordError> verify_signed_part(ByteView signed_part, const Signature& signature,
                                       std::uint64_t seq, std::string_view origin,
                                       const PublicKey& key) {
  if (signed_part.empty() || !verify_detached(key, signed_part, signature)) {
    return fail(RecordError::bad_signature, "signature of seq " + std::to_string(seq) +
                                                " from '" + std::string(origin) +
                                                "' does not verify");
  }
  return Ok{};
}

}  // namespace

const char* to_string(RecordKind kind) {
  switch (kind) {
    case RecordKind::roster: return "roster";
    case RecordKind::report: return "report";
  }
  return "unknown";
}

const char* to_string(RecordError error) {
  switch (error) {
    case RecordError::oversize: return "oversize";
    case RecordError::malformed: return "malformed";
    case RecordError::unknown_version: return "unknown_version";
    case RecordError::unknown_kind: return "unknown_kind";
    case RecordError::bad_signature: return "bad_signature";
    case RecordError::unknown_origin: return "unknown_origin";
    case RecordError::stale: return "stale";
    case RecordError::future_timestamp: return "future_timestamp";
    case RecordError::invalid_payload: return "invalid_payload";
  }
  return "unknown";
}

ByteView Envelope::signed_part() const {
  if (raw.size() < kSignatureFieldBytes) return {};
  return ByteView(raw).first(raw.size() - kSignatureFieldBytes);
}

ByteView EnvelopeView::signed_part() const {
  if (raw.size() < kSignatureFieldBytes) return {};
  return raw.first(raw.size() - kSignatureFieldBytes);
}

Bytes encode_signed_record(RecordKind kind, const std::string& origin, std::uint64_t seq,
                           UnixMs timestamp_ms, ByteView payload, const SecretKey& key) {
  MESH_CHECK(kind == RecordKind::roster || kind == RecordKind::report, "unknown record kind");
  MESH_CHECK(payload.size() <= payload_limit(kind), "record payload over its kind's limit");
  MESH_CHECK(check_origin(kind, origin).ok(), "record origin invalid for its kind");
  MESH_CHECK(seq >= 1, "record seq must be at least 1");
  MESH_CHECK(timestamp_ms >= 0, "record timestamp must not be negative");

  msgpack::sbuffer buffer(payload.size() + 128);
  msgpack::packer<msgpack::sbuffer> packer(buffer);
  packer.pack_array(kEnvelopeElements);
  packer.pack_uint8(kEnvelopeFormatVersion);
  packer.pack_uint8(static_cast<std::uint8_t>(kind));
  packer.pack_str(static_cast<std::uint32_t>(origin.size()));
  packer.pack_str_body(origin.data(), static_cast<std::uint32_t>(origin.size()));
  packer.pack_uint64(seq);
  packer.pack_uint64(static_cast<std::uint64_t>(timestamp_ms));
  packer.pack_bin(static_cast<std::uint32_t>(payload.size()));
  packer.pack_bin_body(reinterpret_cast<const char*>(payload.data()),
                       static_cast<std::uint32_t>(payload.size()));
  auto* begin = reinterpret_cast<const std::uint8_t*>(buffer.data());
  Signature signature = sign_detached(key, ByteView(begin, buffer.size()));
  packer.pack_bin(kSignatureBytes);
  packer.pack_bin_body(reinterpret_cast<const char*>(signature.data()), kSignatureBytes);
  begin = reinterpret_cast<const std::uint8_t*>(buffer.data());
  return Bytes(begin, begin + buffer.size());
}

Result<EnvelopeView, RecordError> decode_envelope_view(ByteView raw) {
  if (raw.size() > kRecordBytesMax) {
    return fail(RecordError::oversize, std::to_string(raw.size()) + " bytes, over the limit of " +
                                           std::to_string(kRecordBytesMax));
  }
  Reader reader(raw);
  std::uint32_t count = 0;
  if (reader.read_array_header(&count) != ReadStatus::ok) {
    return fail(RecordError::malformed, "not a msgpack array");
  }
  if (count != kEnvelopeElements) {
    return fail(RecordError::malformed,
                "array of " + std::to_string(count) + " elements, expected 7");
  }
  EnvelopeView out;
  if (auto status = decode_header_fields(reader, out); !status) return status.error();
  if (auto status = decode_body_fields(reader, out); !status) return status.error();
  if (!reader.at_end()) {
    return fail(RecordError::malformed,
                std::to_string(reader.remaining()) + " trailing bytes after the signature");
  }
  out.raw = raw;
  return out;
}

Result<Envelope, RecordError> decode_envelope(ByteView raw) {
  auto view = decode_envelope_view(raw);
  if (!view) return view.error();
  Envelope out;
  out.kind = view->kind;
  out.origin.assign(view->origin);
  out.seq = view->seq;
  out.timestamp_ms = view->timestamp_ms;
  out.payload.assign(view->payload.begin(), view->payload.end());
  out.signature = view->signature;
  out.raw.assign(raw.begin(), raw.end());
  return out;
}

Status<RecordError> verify_envelope(const Envelope& envelope, const PublicKey& key) {
  return verify_signed_part(envelope.signed_part(), envelope.signature, envelope.seq,
                            envelope.origin, key);
}

Status<RecordError> verify_envelope(const EnvelopeView& envelope, const PublicKey& key) {
  return verify_signed_part(envelope.signed_part(), envelope.signature, envelope.seq,
                            envelope.origin, key);
}

}  // namespace mesh

// The record/ envelope decoder as it was before the hand-rolled reader
// (msgpack-c objects under per-field unpack_limit), kept only as the
// reference of the differential test. Not used by the library.
#include <msgpack.hpp>

#include <algorithm>
#include <limits>

#include "common/server_id.h"
#include "tests/record/legacy_decode.h"

namespace mesh::legacy {
namespace {

constexpr std::size_t kEnvelopeElements = 7;
// The signature is always encoded as bin 8: c4 40 <64 bytes>.
constexpr std::uint8_t kBin8 = 0xc4;

constexpr const char* kUint = "non-negative integer";

Error<RecordError> fail(RecordError code, std::string message) {
  return make_error(code, "record: " + std::move(message));
}

bool reference_buffer(msgpack::type::object_type, std::size_t, void*) { return true; }

std::size_t payload_limit(RecordKind kind) {
  return kind == RecordKind::roster ? kRosterPayloadBytesMax : kReportPayloadBytesMax;
}

// Reads the outer array header at raw[0]; returns the element count and sets
// `offset` past the header, or nullopt when raw does not start with an array.
std::optional<std::uint64_t> read_array_header(ByteView raw, std::size_t& offset) {
  if (raw.empty()) return std::nullopt;
  std::uint8_t b = raw[0];
  if (b >= 0x90 && b <= 0x9f) {
    offset = 1;
    return b & 0x0f;
  }
  std::size_t width = b == 0xdc ? 2 : b == 0xdd ? 4 : 0;
  if (width == 0 || raw.size() < 1 + width) return std::nullopt;
  std::uint64_t count = 0;
  for (std::size_t i = 0; i < width; ++i) count = count << 8 | raw[1 + i];
  offset = 1 + width;
  return count;
}

// One envelope element: unpacks raw[offset..] with `limit`, advancing offset.
// Overflowing a str/bin limit on a str/bin field is `oversize`; every other
// failure (truncation, wrong type, nested containers) is `malformed`.
Result<msgpack::object_handle, RecordError> unpack_field(ByteView raw, std::size_t& offset,
                                                         const char* field, const char* expected,
                                                         std::size_t str_max,
                                                         std::size_t bin_max) {
  msgpack::unpack_limit limit(0, 0, str_max, bin_max, 0, 0);
  try {
    return msgpack::unpack(reinterpret_cast<const char*>(raw.data()), raw.size(), offset,
                           reference_buffer, nullptr, limit);
  } catch (const msgpack::str_size_overflow&) {
    if (str_max > 0) {
      return fail(RecordError::oversize, std::string(field) + ": string longer than " +
                                             std::to_string(str_max) + " bytes");
    }
  } catch (const msgpack::bin_size_overflow&) {
    if (bin_max > 0) {
      return fail(RecordError::oversize, std::string(field) + ": longer than " +
                                             std::to_string(bin_max) + " bytes");
    }
  } catch (const msgpack::insufficient_bytes&) {
    return fail(RecordError::malformed, std::string(field) + ": truncated");
  } catch (const std::exception&) {
    // parse errors, containers or ext where a scalar belongs: handled below
  }
  return fail(RecordError::malformed, std::string(field) + ": not a " + expected);
}

Result<std::uint64_t, RecordError> as_uint(const msgpack::object& object, const char* field) {
  if (object.type != msgpack::type::POSITIVE_INTEGER) {
    return fail(RecordError::malformed, std::string(field) + ": not a " + kUint);
  }
  return object.via.u64;
}

Status<RecordError> check_origin(RecordKind kind, const std::string& origin) {
  if (kind == RecordKind::roster) {
    if (origin != kOperatorOrigin) {
      return fail(RecordError::malformed,
                  "origin '" + origin + "': a roster record must come from 'operator'");
    }
    return Ok{};
  }
  if (origin == kOperatorOrigin || !is_valid_server_id(origin)) {
    return fail(RecordError::malformed, "origin '" + origin + "': not a valid server id");
  }
  return Ok{};
}

// Decodes elements 0..4 (version, kind, origin, seq, timestamp) into `out`.
Status<RecordError> decode_header_fields(ByteView raw, std::size_t& offset, Envelope& out) {
  auto version = unpack_field(raw, offset, "format_version", kUint, 0, 0);
  if (!version) return version.error();
  auto version_value = as_uint(version->get(), "format_version");
  if (!version_value) return version_value.error();
  if (*version_value != kEnvelopeFormatVersion) {
    return fail(RecordError::unknown_version,
                "format_version " + std::to_string(*version_value) + " is not supported");
  }
  auto kind = unpack_field(raw, offset, "kind", kUint, 0, 0);
  if (!kind) return kind.error();
  auto kind_value = as_uint(kind->get(), "kind");
  if (!kind_value) return kind_value.error();
  if (*kind_value != 1 && *kind_value != 2) {
    return fail(RecordError::unknown_kind, "kind " + std::to_string(*kind_value) + " is unknown");
  }
  out.format_version = kEnvelopeFormatVersion;
  out.kind = static_cast<RecordKind>(*kind_value);

  auto origin = unpack_field(raw, offset, "origin", "string", kServerIdBytesMax, 0);
  if (!origin) return origin.error();
  if (origin->get().type != msgpack::type::STR) {
    return fail(RecordError::malformed, "origin: not a string");
  }
  out.origin.assign(origin->get().via.str.ptr, origin->get().via.str.size);
  if (auto status = check_origin(out.kind, out.origin); !status) return status;

  auto seq = unpack_field(raw, offset, "seq", kUint, 0, 0);
  if (!seq) return seq.error();
  auto seq_value = as_uint(seq->get(), "seq");
  if (!seq_value) return seq_value.error();
  if (*seq_value == 0) return fail(RecordError::malformed, "seq: must be at least 1");
  out.seq = *seq_value;

  auto timestamp = unpack_field(raw, offset, "timestamp_ms", kUint, 0, 0);
  if (!timestamp) return timestamp.error();
  auto timestamp_value = as_uint(timestamp->get(), "timestamp_ms");
  if (!timestamp_value) return timestamp_value.error();
  if (*timestamp_value > static_cast<std::uint64_t>(std::numeric_limits<UnixMs>::max())) {
    return fail(RecordError::malformed, "timestamp_ms: beyond the signed 64-bit range");
  }
  out.timestamp_ms = static_cast<UnixMs>(*timestamp_value);
  return Ok{};
}

// Decodes elements 5 and 6 (payload, signature) into `out`.
Status<RecordError> decode_body_fields(ByteView raw, std::size_t& offset, Envelope& out) {
  auto payload = unpack_field(raw, offset, "payload", "bin", 0, payload_limit(out.kind));
  if (!payload) return payload.error();
  if (payload->get().type != msgpack::type::BIN) {
    return fail(RecordError::malformed, "payload: not a bin");
  }
  const auto& bin = payload->get().via.bin;
  out.payload.assign(bin.ptr, bin.ptr + bin.size);

  if (offset < raw.size() && raw[offset] != kBin8) {
    return fail(RecordError::malformed, "signature: not a bin 8 of 64 bytes");
  }
  auto signature = unpack_field(raw, offset, "signature", "bin", 0, kSignatureBytes);
  if (!signature) {
    if (signature.code() == RecordError::oversize) {
      return fail(RecordError::malformed, "signature: longer than 64 bytes");
    }
    return signature.error();
  }
  if (signature->get().type != msgpack::type::BIN) {
    return fail(RecordError::malformed, "signature: not a bin");
  }
  const auto& sig = signature->get().via.bin;
  if (sig.size != kSignatureBytes) {
    return fail(RecordError::malformed,
                "signature: " + std::to_string(sig.size) + " bytes, expected 64");
  }
  std::copy(sig.ptr, sig.ptr + sig.size, out.signature.begin());
  return Ok{};
}

}  // namespace

Result<Envelope, RecordError> decode_envelope_msgpack_c(ByteView raw) {
  if (raw.size() > kRecordBytesMax) {
    return fail(RecordError::oversize, std::to_string(raw.size()) + " bytes, over the limit of " +
                                           std::to_string(kRecordBytesMax));
  }
  std::size_t offset = 0;
  std::optional<std::uint64_t> count = read_array_header(raw, offset);
  if (!count) return fail(RecordError::malformed, "not a msgpack array");
  if (*count != kEnvelopeElements) {
    return fail(RecordError::malformed,
                "array of " + std::to_string(*count) + " elements, expected 7");
  }
  Envelope out;
  if (auto status = decode_header_fields(raw, offset, out); !status) return status.error();
  if (auto status = decode_body_fields(raw, offset, out); !status) return status.error();
  if (offset != raw.size()) {
    return fail(RecordError::malformed,
                std::to_string(raw.size() - offset) + " trailing bytes after the signature");
  }
  out.raw.assign(raw.begin(), raw.end());
  return out;
}

}  // namespace mesh::legacy

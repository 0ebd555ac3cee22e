// Fuzz target: the record envelope (record/envelope.h, docs/PROTOCOL.md
// "Record envelope"). Input: the bytes of one record, as gossip, storage,
// the roster file and PUT /v1/roster hand them over.
//
// Properties:
// - decode_envelope and decode_envelope_view agree: both accept with the same
//   fields, or both refuse with the same error code and message;
// - an accepted record keeps the input as `raw`, every field within its
//   documented limit, and the signed part is raw minus the 66-byte signature;
// - re-encoding the decoded fields (encode_signed_record, a fixed key)
//   decodes to the same fields: what decodes re-encodes to the same content;
// - decoding allocates nothing larger than the input plus a message.
#include <algorithm>
#include <cstddef>
#include <cstdint>

#include "common/server_id.h"
#include "record/envelope.h"
#include "tests/fuzz/fuzz_support.h"

namespace {

using namespace mesh;

std::size_t payload_limit(RecordKind kind) {
  return kind == RecordKind::roster ? kRosterPayloadBytesMax : kReportPayloadBytesMax;
}

bool same_view(ByteView a, ByteView b) { return std::equal(a.begin(), a.end(), b.begin(), b.end()); }

void check_accepted(const Envelope& owned, const EnvelopeView& view, ByteView input) {
  FUZZ_CHECK(input.size() <= kRecordBytesMax);
  FUZZ_CHECK(owned.format_version == kEnvelopeFormatVersion);
  FUZZ_CHECK(owned.kind == RecordKind::roster || owned.kind == RecordKind::report);
  FUZZ_CHECK(owned.origin.size() <= kServerIdBytesMax && !owned.origin.empty());
  FUZZ_CHECK(owned.seq >= 1);
  FUZZ_CHECK(owned.timestamp_ms >= 0);
  FUZZ_CHECK(owned.payload.size() <= payload_limit(owned.kind));
  FUZZ_CHECK(same_view(owned.raw, input));
  FUZZ_CHECK(input.size() >= kSignatureBytes + 2);
  FUZZ_CHECK(same_view(owned.signed_part(), input.first(input.size() - kSignatureBytes - 2)));
  // The view names the same values, pointing into the input.
  FUZZ_CHECK(view.kind == owned.kind && view.origin == owned.origin && view.seq == owned.seq);
  FUZZ_CHECK(view.timestamp_ms == owned.timestamp_ms && view.signature == owned.signature);
  FUZZ_CHECK(same_view(view.payload, owned.payload) && same_view(view.raw, input));
  FUZZ_CHECK(same_view(view.signed_part(), owned.signed_part()));
}

void check_reencodes(const Envelope& decoded) {
  static const KeyPair key = fuzz::key_of(fuzz::kOperatorSeed);
  const Bytes again = encode_signed_record(decoded.kind, decoded.origin, decoded.seq,
                                           decoded.timestamp_ms, decoded.payload, key.secret_key);
  auto round = decode_envelope(again);
  FUZZ_CHECK(round.ok());
  FUZZ_CHECK(round->kind == decoded.kind && round->origin == decoded.origin);
  FUZZ_CHECK(round->seq == decoded.seq && round->timestamp_ms == decoded.timestamp_ms);
  FUZZ_CHECK(round->payload == decoded.payload);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const ByteView input = fuzz::view_of(data, size);
  std::size_t largest = 0;
  auto owned = [&] {
    fuzz::AllocationWatch watch;
    auto result = decode_envelope(input);
    largest = watch.largest();
    return result;
  }();
  FUZZ_CHECK(largest <= size + 512);
  auto view = decode_envelope_view(input);
  FUZZ_CHECK(owned.ok() == view.ok());
  if (!owned.ok()) {
    FUZZ_CHECK(owned.code() == view.code() && owned.message() == view.message());
    if (size > kRecordBytesMax) FUZZ_CHECK(owned.code() == RecordError::oversize);
    return 0;
  }
  check_accepted(*owned, *view, input);
  check_reencodes(*owned);
  return 0;
}

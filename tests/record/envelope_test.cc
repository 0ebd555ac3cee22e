#include <doctest/doctest.h>

#include <functional>
#include <limits>
#include <msgpack.hpp>

#include "record/envelope.h"
#include "tests/record/fixtures.h"

using namespace mesh;
using mesh::test::contains;

namespace {

using Packer = msgpack::packer<msgpack::sbuffer>;
using FieldWriter = std::function<void(Packer&, msgpack::sbuffer&)>;

const KeyPair& node_key() {
  static const KeyPair key = test::test_key(11);
  return key;
}

void pack_str(Packer& p, const std::string& s) {
  p.pack_str(static_cast<std::uint32_t>(s.size()));
  p.pack_str_body(s.data(), static_cast<std::uint32_t>(s.size()));
}

void pack_bin(Packer& p, const Bytes& b) {
  p.pack_bin(static_cast<std::uint32_t>(b.size()));
  p.pack_bin_body(reinterpret_cast<const char*>(b.data()), static_cast<std::uint32_t>(b.size()));
}

// The seven writers of a valid report record from "de-fra-1"; the last one
// signs whatever was packed before it.
std::vector<FieldWriter> valid_fields() {
  return {
      [](Packer& p, msgpack::sbuffer&) { p.pack_uint8(1); },
      [](Packer& p, msgpack::sbuffer&) { p.pack_uint8(2); },
      [](Packer& p, msgpack::sbuffer&) { pack_str(p, "de-fra-1"); },
      [](Packer& p, msgpack::sbuffer&) { p.pack_uint64(42); },
      [](Packer& p, msgpack::sbuffer&) { p.pack_uint64(1'700'000'000'000); },
      [](Packer& p, msgpack::sbuffer&) { pack_bin(p, Bytes{0x93, 0x01, 0x02, 0x03}); },
      [](Packer& p, msgpack::sbuffer& b) {
        Signature s = sign_detached(node_key().secret_key,
                                    ByteView(reinterpret_cast<const std::uint8_t*>(b.data()),
                                             b.size()));
        pack_bin(p, Bytes(s.begin(), s.end()));
      },
  };
}

Bytes build(const std::vector<FieldWriter>& fields) {
  msgpack::sbuffer buffer;
  Packer packer(buffer);
  packer.pack_array(static_cast<std::uint32_t>(fields.size()));
  for (const FieldWriter& field : fields) field(packer, buffer);
  const auto* begin = reinterpret_cast<const std::uint8_t*>(buffer.data());
  return Bytes(begin, begin + buffer.size());
}

Bytes build_with(std::size_t index, FieldWriter writer) {
  std::vector<FieldWriter> fields = valid_fields();
  fields[index] = std::move(writer);
  return build(fields);
}

void expect_error(const Bytes& raw, RecordError code, const std::string& fragment) {
  CAPTURE(to_hex(raw));
  auto decoded = decode_envelope(raw);
  REQUIRE_FALSE(decoded.ok());
  CHECK(to_string(decoded.code()) == std::string(to_string(code)));
  CHECK_MESSAGE(contains(decoded.message(), fragment), decoded.message());
}

}  // namespace

TEST_CASE("encode then decode gives the same fields and the exact bytes") {
  Bytes payload = {1, 2, 3, 4, 5};
  Bytes raw = encode_signed_record(RecordKind::report, "de-fra-1", 7, 1'700'000'000'123,
                                   payload, node_key().secret_key);
  auto env = decode_envelope(raw);
  REQUIRE(env.ok());
  CHECK(env->format_version == 1);
  CHECK(env->kind == RecordKind::report);
  CHECK(env->origin == "de-fra-1");
  CHECK(env->seq == 7);
  CHECK(env->timestamp_ms == 1'700'000'000'123);
  CHECK(env->payload == payload);
  CHECK(env->raw == raw);
  CHECK(env->signed_part().size() == raw.size() - 66);
  CHECK(verify_envelope(*env, node_key().public_key).ok());
  // Same inputs, same bytes (Ed25519 is deterministic).
  CHECK(raw == encode_signed_record(RecordKind::report, "de-fra-1", 7, 1'700'000'000'123, payload,
                                    node_key().secret_key));
}

TEST_CASE("a roster record from the operator round-trips") {
  KeyPair op = test::test_key(99);
  Bytes payload(kRosterPayloadBytesMax, 0xab);  // the largest allowed payload
  Bytes raw = encode_signed_record(RecordKind::roster, kOperatorOrigin, 3, 0, payload,
                                   op.secret_key);
  CHECK(raw.size() <= kRecordBytesMax);
  auto env = decode_envelope(raw);
  REQUIRE(env.ok());
  CHECK(env->kind == RecordKind::roster);
  CHECK(env->origin == "operator");
  CHECK(env->timestamp_ms == 0);
  CHECK(verify_envelope(*env, op.public_key).ok());
}

TEST_CASE("the hand-built valid record decodes, also with a 16-bit array header") {
  CHECK(decode_envelope(build(valid_fields())).ok());
  Bytes raw = build(valid_fields());
  // Re-encode the header as array 16 (dc 00 07) and re-sign.
  Bytes body(raw.begin() + 1, raw.end() - 66);
  Bytes signed_part = {0xdc, 0x00, 0x07};
  signed_part.insert(signed_part.end(), body.begin(), body.end());
  Signature s = sign_detached(node_key().secret_key, signed_part);
  Bytes wide = signed_part;
  wide.push_back(0xc4);
  wide.push_back(0x40);
  wide.insert(wide.end(), s.begin(), s.end());
  auto env = decode_envelope(wide);
  REQUIRE(env.ok());
  CHECK(verify_envelope(*env, node_key().public_key).ok());
}

TEST_CASE("wrong key and flipped bytes give bad_signature") {
  Bytes raw = encode_signed_record(RecordKind::report, "de-fra-1", 1, 1000, Bytes{9, 9},
                                   node_key().secret_key);
  auto env = decode_envelope(raw);
  REQUIRE(env.ok());
  auto wrong = verify_envelope(*env, test::test_key(12).public_key);
  REQUIRE_FALSE(wrong.ok());
  CHECK(wrong.code() == RecordError::bad_signature);
  CHECK(contains(wrong.message(), "'de-fra-1'"));

  int decoded_but_refused = 0;
  for (std::size_t i = 0; i < raw.size(); ++i) {
    CAPTURE(i);
    Bytes flipped = raw;
    flipped[i] ^= 0x01;
    auto tampered = decode_envelope(flipped);
    if (!tampered.ok()) continue;  // structure broken: refused before the signature
    auto status = verify_envelope(*tampered, node_key().public_key);
    REQUIRE_FALSE(status.ok());
    CHECK(status.code() == RecordError::bad_signature);
    ++decoded_but_refused;
  }
  // At least every payload, seq, timestamp and signature byte decodes fine
  // and must then fail verification.
  CHECK(decoded_but_refused >= 64 + 2);
}

TEST_CASE("a hand-built Envelope without raw bytes never verifies") {
  Envelope env;
  env.origin = "de-fra-1";
  CHECK(verify_envelope(env, node_key().public_key).code() == RecordError::bad_signature);
}

TEST_CASE("truncation at every length is malformed") {
  Bytes raw = build(valid_fields());
  for (std::size_t n = 0; n < raw.size(); ++n) {
    CAPTURE(n);
    auto decoded = decode_envelope(ByteView(raw).first(n));
    REQUIRE_FALSE(decoded.ok());
    CHECK(decoded.code() == RecordError::malformed);
  }
  expect_error(Bytes(raw.begin(), raw.begin() + 20), RecordError::malformed, "truncated");
}

TEST_CASE("trailing bytes, wrong counts and non-arrays are malformed") {
  Bytes raw = build(valid_fields());
  raw.push_back(0x00);
  expect_error(raw, RecordError::malformed, "1 trailing bytes");
  std::vector<FieldWriter> six = valid_fields();
  six.erase(six.begin() + 5);
  expect_error(build(six), RecordError::malformed, "array of 6 elements, expected 7");
  std::vector<FieldWriter> eight = valid_fields();
  eight.insert(eight.begin(), [](Packer& p, msgpack::sbuffer&) { p.pack_uint8(1); });
  expect_error(build(eight), RecordError::malformed, "array of 8 elements");
  expect_error(Bytes{0x81, 0x01, 0x02}, RecordError::malformed, "not a msgpack array");
  expect_error(Bytes{0x01}, RecordError::malformed, "not a msgpack array");
  expect_error(Bytes{0xdc, 0x00}, RecordError::malformed, "not a msgpack array");
}

TEST_CASE("the whole record over kRecordBytesMax is oversize") {
  Bytes raw(kRecordBytesMax + 1, 0);
  expect_error(raw, RecordError::oversize, "over the limit");
}

TEST_CASE("each field with a wrong type is malformed and named") {
  struct Case {
    std::size_t index;
    FieldWriter writer;
    const char* fragment;
  };
  auto str = [](const char* s) { return [s](Packer& p, msgpack::sbuffer&) { pack_str(p, s); }; };
  auto negative = [](Packer& p, msgpack::sbuffer&) { p.pack_int8(-1); };
  // Raw bytes: msgpack-c packs an integral double as an integer.
  auto float_one = [](Packer&, msgpack::sbuffer& b) {
    const char float64_one[] = {'\xcb', '\x3f', '\xf0', 0, 0, 0, 0, 0, 0};
    b.write(float64_one, sizeof float64_one);
  };
  auto nested = [](Packer& p, msgpack::sbuffer&) { p.pack_array(1); p.pack_uint8(1); };
  auto nil = [](Packer& p, msgpack::sbuffer&) { p.pack_nil(); };
  auto bin = [](Packer& p, msgpack::sbuffer&) { pack_bin(p, Bytes{1}); };
  const Case cases[] = {
      {0, str("1"), "format_version"},  {0, negative, "format_version"},
      {0, float_one, "format_version"}, {0, nested, "format_version"},
      {1, str("2"), "kind"},            {1, nil, "kind"},
      {2, bin, "origin: not a string"}, {2, [](Packer& p, msgpack::sbuffer&) { p.pack_uint8(5); },
                                         "origin: not a string"},
      {3, negative, "seq"},             {3, float_one, "seq"},
      {3, str("42"), "seq"},            {4, negative, "timestamp_ms"},
      {4, float_one, "timestamp_ms"},   {4, nested, "timestamp_ms"},
      {5, str("payload"), "payload"},   {5, nil, "payload"},
      {6, str("sig"), "signature"},     {6, nil, "signature"},
  };
  for (std::size_t i = 0; i < std::size(cases); ++i) {
    const Case& c = cases[i];
    CAPTURE(i);
    CAPTURE(std::string(c.fragment));
    expect_error(build_with(c.index, c.writer), RecordError::malformed, c.fragment);
  }
}

TEST_CASE("unknown version and unknown kind") {
  expect_error(build_with(0, [](Packer& p, msgpack::sbuffer&) { p.pack_uint8(2); }),
               RecordError::unknown_version, "format_version 2");
  expect_error(build_with(0, [](Packer& p, msgpack::sbuffer&) { p.pack_uint8(0); }),
               RecordError::unknown_version, "format_version 0");
  expect_error(build_with(1, [](Packer& p, msgpack::sbuffer&) { p.pack_uint8(3); }),
               RecordError::unknown_kind, "kind 3");
  expect_error(build_with(1, [](Packer& p, msgpack::sbuffer&) { p.pack_uint8(0); }),
               RecordError::unknown_kind, "kind 0");
  expect_error(build_with(1, [](Packer& p, msgpack::sbuffer&) { p.pack_uint32(70000); }),
               RecordError::unknown_kind, "kind 70000");
}

TEST_CASE("origin rules") {
  auto origin = [](std::string s) {
    return [s](Packer& p, msgpack::sbuffer&) { pack_str(p, s); };
  };
  expect_error(build_with(2, origin(std::string(65, 'a'))), RecordError::oversize,
               "origin: string longer than 64 bytes");
  CHECK(decode_envelope(build_with(2, origin(std::string(64, 'a')))).ok());
  expect_error(build_with(2, origin("De-Fra-1")), RecordError::malformed,
               "origin 'De-Fra-1': not a valid server id");
  expect_error(build_with(2, origin("")), RecordError::malformed, "not a valid server id");
  expect_error(build_with(2, origin("operator")), RecordError::malformed,
               "origin 'operator': not a valid server id");
  std::vector<FieldWriter> roster_from_node = valid_fields();
  roster_from_node[1] = [](Packer& p, msgpack::sbuffer&) { p.pack_uint8(1); };
  expect_error(build(roster_from_node), RecordError::malformed,
               "a roster record must come from 'operator'");
}

TEST_CASE("seq and timestamp bounds") {
  expect_error(build_with(3, [](Packer& p, msgpack::sbuffer&) { p.pack_uint8(0); }),
               RecordError::malformed, "seq: must be at least 1");
  CHECK(decode_envelope(build_with(3, [](Packer& p, msgpack::sbuffer&) {
          p.pack_uint64(std::numeric_limits<std::uint64_t>::max());
        })).ok());
  expect_error(build_with(4, [](Packer& p, msgpack::sbuffer&) {
                 p.pack_uint64(std::uint64_t{1} << 63);
               }),
               RecordError::malformed,
               "timestamp_ms: beyond the signed 64-bit range");
}

TEST_CASE("payload over its kind's limit is oversize") {
  Bytes big(kReportPayloadBytesMax + 1, 0);
  expect_error(build_with(5, [&](Packer& p, msgpack::sbuffer&) { pack_bin(p, big); }),
               RecordError::oversize, "payload: longer than 65536 bytes");
  Bytes exact(kReportPayloadBytesMax, 0);
  CHECK(decode_envelope(build_with(5, [&](Packer& p, msgpack::sbuffer&) { pack_bin(p, exact); }))
            .ok());
  std::vector<FieldWriter> roster = valid_fields();
  roster[1] = [](Packer& p, msgpack::sbuffer&) { p.pack_uint8(1); };
  roster[2] = [](Packer& p, msgpack::sbuffer&) { pack_str(p, "operator"); };
  roster[5] = [&](Packer& p, msgpack::sbuffer&) { pack_bin(p, big); };
  CHECK(decode_envelope(build(roster)).ok());  // rosters may be larger
  Bytes too_big_roster(kRosterPayloadBytesMax + 1, 0);
  roster[5] = [&](Packer& p, msgpack::sbuffer&) { pack_bin(p, too_big_roster); };
  expect_error(build(roster), RecordError::oversize, "payload: longer than 1048576 bytes");
}

TEST_CASE("signature must be a bin of exactly 64 bytes, encoded as bin 8") {
  auto sig = [](std::size_t n) {
    return [n](Packer& p, msgpack::sbuffer&) { pack_bin(p, Bytes(n, 7)); };
  };
  expect_error(build_with(6, sig(63)), RecordError::malformed, "signature: 63 bytes, expected 64");
  expect_error(build_with(6, sig(0)), RecordError::malformed, "signature: 0 bytes");
  expect_error(build_with(6, sig(65)), RecordError::malformed, "signature: longer than 64");
  expect_error(build_with(6, sig(300)), RecordError::malformed, "signature");
  Bytes raw = build(valid_fields());
  Bytes bin16(raw.begin(), raw.end() - 66);
  bin16.insert(bin16.end(), {0xc5, 0x00, 0x40});
  bin16.insert(bin16.end(), raw.end() - 64, raw.end());
  expect_error(bin16, RecordError::malformed, "signature: not a bin 8");
}

TEST_CASE("to_string names every RecordError") {
  CHECK(std::string(to_string(RecordError::oversize)) == "oversize");
  CHECK(std::string(to_string(RecordError::malformed)) == "malformed");
  CHECK(std::string(to_string(RecordError::unknown_version)) == "unknown_version");
  CHECK(std::string(to_string(RecordError::unknown_kind)) == "unknown_kind");
  CHECK(std::string(to_string(RecordError::bad_signature)) == "bad_signature");
  CHECK(std::string(to_string(RecordError::unknown_origin)) == "unknown_origin");
  CHECK(std::string(to_string(RecordError::stale)) == "stale");
  CHECK(std::string(to_string(RecordError::future_timestamp)) == "future_timestamp");
  CHECK(std::string(to_string(RecordError::invalid_payload)) == "invalid_payload");
}

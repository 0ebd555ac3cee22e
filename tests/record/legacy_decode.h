// Test-only reference decoders: the msgpack-c based decode_envelope and
// decode_report_payload that record/ used before its hand-rolled reader.
// The differential test holds the library to their results and error codes.
#pragma once

#include "record/envelope.h"
#include "record/report.h"

namespace mesh::legacy {

Result<Envelope, RecordError> decode_envelope_msgpack_c(ByteView raw);
Result<Report, ReportError> decode_report_payload_msgpack_c(ByteView payload,
                                                            const Roster& roster,
                                                            std::uint32_t origin_index,
                                                            UnixMs record_timestamp_ms);

}  // namespace mesh::legacy

// The daemon's stored verdict snapshot (agent/verdicts, written by
// verdict::to_canonical_json; docs/STORAGE.md, "Agent state") read back
// into the engine's value types, so meshctl renders it with the API's own
// code (node/api/render.h).
#pragma once

#include "common/bytes.h"
#include "tools/meshctl/exit_codes.h"
#include "verdict/evaluation.h"

namespace mesh::ctl {

// unusable, naming what is wrong, for anything but the canonical layout.
CtlResult<verdict::Evaluation> decode_stored_verdicts(ByteView bytes);

}  // namespace mesh::ctl

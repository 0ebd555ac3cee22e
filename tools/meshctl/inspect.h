// Shared pieces of meshctl: reading inputs and describing records. Every
// function reports failure as a message (already naming the file or field)
// and never touches the store except through a read-only open.
#pragma once

#include <memory>
#include <optional>
#include <string>

#include <nlohmann/json_fwd.hpp>

#include "common/bytes.h"
#include "storage/store.h"
#include "storage/txn.h"
#include "record/envelope.h"
#include "record/roster.h"

namespace mesh::ctl {

// A regular file's whole content, bounded by `bytes_max`; nullopt with
// `error` set. Anything but a regular file (a FIFO, a directory, a device)
// is refused without being read, and opening never blocks.
std::optional<Bytes> read_file(const std::string& path, std::size_t bytes_max, std::string& error);

// True when `path` names a regular file; otherwise false with `error` saying
// what it is (missing, a FIFO, ...). Opens nothing.
bool is_regular_file(const std::string& path, std::string& error);

// The store in `data_dir` opened read-only (a running daemon is not
// disturbed) and one snapshot of it; the snapshot ends before the store. A
// data.mdb that is not a regular LMDB file (empty, say) is refused before
// LMDB opens it: "not a meshnode store".
struct StoreSnapshot {
  std::unique_ptr<Store> store;
  std::optional<ReadTxn> txn;
};
std::optional<StoreSnapshot> open_store_snapshot(const std::string& data_dir, std::string& error);

// The signed roster record held by the store in `data_dir` (opened
// read-only, so a running daemon is not disturbed).
std::optional<Bytes> read_store_roster(const std::string& data_dir, std::string& error);

struct SignedRoster {
  Envelope envelope;
  Roster roster;
};

// Decodes a signed roster record. When `operator_key_hex` is non-empty the
// signature is checked against it; empty, nothing is checked (callers that
// show the roster say so). `signature_failed` tells a failed check (exit 1)
// from undecodable input (exit 2).
std::optional<SignedRoster> open_signed_roster(const Bytes& raw, const std::string& operator_key_hex,
                                               std::string& error, bool& signature_failed);

nlohmann::json roster_to_json(const Roster& roster);

}  // namespace mesh::ctl

// The data dir as the user meshnode runs as finds it (docs/CONFIG.md,
// "The data dir"): it exists, is a directory this user may write, and the
// store's files in it (data.mdb, lock.mdb) are this user's to read and
// write. Run as root, meshnode refuses a data dir another user owns: the
// files root would create there (a first start makes both) are root's, and
// the service user's next start fails on them with `mdb_env_open:
// Permission denied`. Every message names the owner and the command that
// fixes it. Used by the daemon before it opens the store, and by
// `meshnode --check-config`.
#pragma once

#include <string>

#include "common/result.h"

namespace mesh::node {

enum class DataDirError {
  missing,        // no such directory
  not_directory,
  not_writable,   // the dir, or a store file in it, is not this user's to write
  root_in_users_dir,  // run as root in a dir another user owns
  unreadable,     // stat failed otherwise
};

// Ok with a phrase ("exists, writable by meshnode (uid 998)"), or the error
// with the sentence that says what to run.
Result<std::string, DataDirError> check_data_dir(const std::string& dir);

// For `meshnode --check-config` run as root: the data dir as its owner
// will find it when the service runs as that owner (the dir's owner has
// rwx on it, the store's files are the owner's and readable and writable
// by them). Run as root in a dir root owns, or by another user, it is
// check_data_dir.
Result<std::string, DataDirError> check_data_dir_for_service(const std::string& dir);

// `message` (a storage error about `dir`) with, when it is a permission
// error, what check_data_dir finds wrong: the owner and the chown to run.
std::string explain_storage_error(const std::string& dir, const std::string& message);

}  // namespace mesh::node

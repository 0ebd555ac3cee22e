// Reading a file that must be a regular file, of bounded size, without ever
// blocking on it: opened with O_NONBLOCK (a FIFO would otherwise wait for a
// writer), its kind checked with fstat on the open descriptor (no window
// between a stat and the open), and no more than the bound read. The
// daemon's config, roster and token files and meshctl's inputs all go
// through here.
#pragma once

#include <cstddef>
#include <string>

#include "common/result.h"

namespace mesh {

enum class FileReadError {
  missing,      // ENOENT (a caller may treat an absent file as "none")
  unreadable,   // cannot open, or the read failed (the message has strerror's text)
  not_regular,  // a FIFO, a directory, a device...: "is a FIFO, not a regular file"
  too_large,    // more than bytes_max: "is over N bytes"
};

enum class FileReadMode {
  whole,   // the file must fit in bytes_max (else too_large)
  prefix,  // the first bytes_max bytes are the answer
};

// The file's bytes. The error's message is a phrase to put after the path
// ("is a FIFO, not a regular file", "cannot be opened (Permission denied)",
// "is over 65536 bytes").
Result<std::string, FileReadError> read_regular_file(const std::string& path, std::size_t bytes_max,
                                                      FileReadMode mode = FileReadMode::whole);

}  // namespace mesh

// What a file that is not a regular file is, in words, for error messages
// ("'x' is a FIFO, not a regular file").
#pragma once

#include <sys/types.h>

namespace mesh {

// "a FIFO", "a directory", "a character device", "a block device",
// "a socket", else "a special file"; `mode` is stat's st_mode.
const char* file_kind(mode_t mode);

}  // namespace mesh

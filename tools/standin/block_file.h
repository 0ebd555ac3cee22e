// The block file on disk: re-read when it changes (its mtime, size or
// inode) or when asked (SIGHUP). A file that does not parse leaves the list
// in force as it was; a file that is absent means no blocks.
// Not thread-safe: the listener's one thread owns it.
#pragma once

#include <ctime>
#include <string>

#include "tools/standin/block_list.h"

namespace mesh::standin {

class BlockFile {
 public:
  explicit BlockFile(std::string path) : path_(std::move(path)) {}

  // Re-reads the file if it changed since the last look, or always when
  // `force`. Returns the line to log about a reload ("" when nothing was
  // read): the counts, or the error and the counts still in force.
  std::string refresh(bool force);

  const BlockList& list() const { return list_; }

 private:
  struct Stamp {
    bool exists = false;
    timespec mtime{};
    long long size = 0;
    unsigned long long inode = 0;
    bool operator==(const Stamp& o) const {
      return exists == o.exists && mtime.tv_sec == o.mtime.tv_sec &&
             mtime.tv_nsec == o.mtime.tv_nsec && size == o.size && inode == o.inode;
    }
  };

  Stamp stamp_now() const;
  std::string counts() const;

  std::string path_;
  BlockList list_;
  Stamp last_;
  bool looked_ = false;
};

}  // namespace mesh::standin

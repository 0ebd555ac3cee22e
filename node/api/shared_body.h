// A response body rendered once per snapshot (node/api/render.h) and sent
// to every client that asks for it without a copy per response. On Linux it
// is also held in a sealed memfd, so that plain-HTTP sessions send it with
// sendfile(2), the way nginx serves a static file from the page cache: the
// body never crosses user space again. TLS sessions write `text`.
#pragma once

#include <string>

namespace mesh::api {

class SharedBody {
 public:
  explicit SharedBody(std::string text);
  ~SharedBody();
  SharedBody(const SharedBody&) = delete;
  SharedBody& operator=(const SharedBody&) = delete;

  const std::string& text() const { return text_; }
  // The sealed memfd holding `text`; -1 where it could not be made (the
  // body is then written from `text`).
  int fd() const { return fd_; }

 private:
  std::string text_;
  int fd_ = -1;
};

}  // namespace mesh::api

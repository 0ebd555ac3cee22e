// Result<T, Code>: a value or an error, for expected failures (bad input, I/O
// errors, a peer that lies). Each module has its own error enum `Code`; the
// message names what failed. Exceptions never cross module boundaries.
#pragma once

#include <string>
#include <utility>
#include <variant>

#include "common/check.h"

namespace mesh {

template <class Code>
struct Error {
  Code code;
  std::string message;
};

template <class Code>
Error<Code> make_error(Code code, std::string message) {
  return Error<Code>{code, std::move(message)};
}

template <class T, class Code>
class [[nodiscard]] Result {
 public:
  Result(T value) : state_(std::in_place_index<0>, std::move(value)) {}  // NOLINT
  Result(Error<Code> error) : state_(std::in_place_index<1>, std::move(error)) {}  // NOLINT

  bool ok() const { return state_.index() == 0; }
  explicit operator bool() const { return ok(); }

  // REQUIRES: ok().
  T& value() & {
    MESH_CHECK(ok(), "Result::value() on an error");
    return std::get<0>(state_);
  }
  const T& value() const& {
    MESH_CHECK(ok(), "Result::value() on an error");
    return std::get<0>(state_);
  }
  T&& value() && {
    MESH_CHECK(ok(), "Result::value() on an error");
    return std::get<0>(std::move(state_));
  }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }

  // REQUIRES: !ok().
  const Error<Code>& error() const {
    MESH_CHECK(!ok(), "Result::error() on a value");
    return std::get<1>(state_);
  }
  Code code() const { return error().code; }
  const std::string& message() const { return error().message; }

 private:
  std::variant<T, Error<Code>> state_;
};

struct Ok {};

// A Result without a value: success or an error.
template <class Code>
using Status = Result<Ok, Code>;

}  // namespace mesh

// Helpers shared by the storage tests: a fresh temp directory per test and
// short ways to open stores and make values.
#pragma once

#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <string>

#include <doctest/doctest.h>

#include "common/bytes.h"
#include "storage/store.h"
#include "storage/txn.h"

namespace mesh::test {

// A directory under /tmp, unique to this object, removed with everything in
// it when the object dies.
class TempDir {
 public:
  TempDir() {
    std::string pattern = "/tmp/meshnode-storage-XXXXXX";
    char* made = ::mkdtemp(pattern.data());
    REQUIRE(made != nullptr);
    path_ = made;
  }
  ~TempDir() {
    std::error_code ignored;
    std::filesystem::remove_all(path_, ignored);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;

  const std::string& path() const { return path_; }
  // A path inside the directory (not created).
  std::string sub(const std::string& name) const { return path_ + "/" + name; }

 private:
  std::string path_;
};

inline StoreOptions read_write_options(std::uint64_t map_size_bytes = 16 << 20) {
  StoreOptions options;
  options.map_size_bytes = map_size_bytes;
  return options;
}

inline StoreOptions read_only_options() {
  StoreOptions options;
  options.read_only = true;
  options.create_if_missing = false;
  return options;
}

// Opens `dir` and REQUIREs success.
inline std::unique_ptr<Store> open_ok(const std::string& dir,
                                      StoreOptions options = read_write_options()) {
  auto store = Store::open(dir, options);
  std::string why = store.ok() ? std::string() : store.message();
  INFO(why);
  REQUIRE(store.ok());
  return std::move(store).value();
}

inline Bytes bytes_of(const std::string& text) { return Bytes(text.begin(), text.end()); }

// `size` bytes derived from `seed`, so that values differ from each other.
inline Bytes filler(std::size_t size, std::uint8_t seed) {
  Bytes out(size);
  for (std::size_t i = 0; i < size; ++i) out[i] = static_cast<std::uint8_t>(seed + i * 31);
  return out;
}

inline Bytes u64_bytes(std::uint64_t value) {
  Bytes out(8);
  for (int i = 0; i < 8; ++i) out[i] = static_cast<std::uint8_t>(value >> (56 - 8 * i));
  return out;
}

inline std::uint64_t u64_of(ByteView bytes) {
  REQUIRE(bytes.size() == 8);
  std::uint64_t value = 0;
  for (std::uint8_t b : bytes) value = value << 8 | b;
  return value;
}

}  // namespace mesh::test

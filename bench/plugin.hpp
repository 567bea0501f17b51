// Loading a PiBench wrapper (.so exporting create_tree, see
// pibench/tree_api.hpp) for `pmindex bench --plugin LIB.so`.
#pragma once

#include <cstdint>
#include <cstring>
#include <memory>
#include <string>

#include "pibench/tree_api.hpp"

namespace pmindex::bench {

class plugin {
 public:
  // dlopen()s the library; throws error(usage) when it is missing or has no
  // create_tree.
  explicit plugin(const std::string& path);
  ~plugin();
  plugin(const plugin&) = delete;
  plugin& operator=(const plugin&) = delete;

  // A new tree; throws error(failure) if create_tree returns null.
  std::unique_ptr<tree_api> create(const tree_options_t& o);
  const std::string& path() const noexcept { return path_; }

 private:
  std::string path_;
  void* handle_ = nullptr;
  tree_api* (*create_)(const tree_options_t&) = nullptr;
};

// 8-byte integer keys as PiBench lays them out: big-endian bytes.
inline void key_bytes(uint64_t key, char out[8]) noexcept {
  uint64_t be = __builtin_bswap64(key);
  std::memcpy(out, &be, 8);
}
inline uint64_t key_from_bytes(const char* b, size_t n) noexcept {
  uint64_t be = 0;
  std::memcpy(&be, b, n < 8 ? n : 8);
  return __builtin_bswap64(be) >> (n < 8 ? (8 - n) * 8 : 0);
}

}  // namespace pmindex::bench

// Loading a PiBench wrapper (.so exporting create_tree, see
// pibench/tree_api.hpp) for `pmindex bench --plugin LIB.so`.
#pragma once

#include <cstdint>
#include <cstring>
#include <memory>
#include <string>

#include "pibench/tree_api.hpp"
#include "pmindex/pm/counters.hpp"

namespace pmindex::bench {

// Which tree_api vtable layout the wrapper was built against.
enum class plugin_abi {
  master,  // PiBench master: destructor, find, insert, update, remove, scan
  bulk,    // the bulk-loading branch: bulk_load before find
};

class plugin {
 public:
  // dlopen()s the library; throws error(usage) when it is missing or has no
  // create_tree.
  plugin(const std::string& path, plugin_abi abi);
  ~plugin();
  plugin(const plugin&) = delete;
  plugin& operator=(const plugin&) = delete;

  // A new tree, called through master's layout whatever the wrapper's (a
  // bulk-layout tree is adapted); throws error(failure) if create_tree
  // returns null.
  std::unique_ptr<tree_api> create(const tree_options_t& o);
  const std::string& path() const noexcept { return path_; }
  // The wrapper's per-thread persistence counters when it is pmindex's own
  // (it exports pmindex_pibench_counters), else null.
  using counters_fn = const pm::counters* (*)();
  counters_fn counters() const noexcept { return counters_; }

 private:
  std::string path_;
  plugin_abi abi_;
  void* handle_ = nullptr;
  void* create_ = nullptr;
  counters_fn counters_ = nullptr;
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

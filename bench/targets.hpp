// What the run loop calls: thin, inlined adapters so that a pmindex index
// costs exactly one virtual call per operation. The loop is a template over
// the target type (no second virtual layer).
//   index_target   a pmindex::index (parallel modes shared and instance)
//   locked_target  a pmindex::index behind one mutex (global-lock)
//   plugin_target  a PiBench tree_api wrapper, 8-byte big-endian keys
#pragma once

#include <cstdint>
#include <mutex>

#include "pibench/tree_api.hpp"
#include "plugin.hpp"
#include "pmindex/index.hpp"

namespace pmindex::bench {

struct index_target {
  index* idx;
  bool read(uint64_t k) { return idx->lookup(k).has_value(); }
  bool insert(uint64_t k, uint64_t v) { return idx->insert(k, v); }
  bool update(uint64_t k, uint64_t v) { return idx->update(k, v); }
  bool remove(uint64_t k) { return idx->remove(k); }
  size_t scan(uint64_t k, uint32_t n, record* buf) { return idx->scan(k, n, buf); }
  // Read-modify-write (YCSB F): read, then write a value derived from it.
  bool rmw(uint64_t k, uint64_t v) {
    auto x = idx->lookup(k);
    return x && idx->update(k, *x ^ v);
  }
};

struct locked_target {
  index_target t;
  std::mutex* mu;
  bool read(uint64_t k) { std::lock_guard l(*mu); return t.read(k); }
  bool insert(uint64_t k, uint64_t v) { std::lock_guard l(*mu); return t.insert(k, v); }
  bool update(uint64_t k, uint64_t v) { std::lock_guard l(*mu); return t.update(k, v); }
  bool remove(uint64_t k) { std::lock_guard l(*mu); return t.remove(k); }
  size_t scan(uint64_t k, uint32_t n, record* buf) { std::lock_guard l(*mu); return t.scan(k, n, buf); }
  bool rmw(uint64_t k, uint64_t v) { std::lock_guard l(*mu); return t.rmw(k, v); }
};

struct plugin_target {
  tree_api* t;
  std::mutex* mu = nullptr;  // global-lock mode
  template <class F>
  auto lock_if(F&& f) -> decltype(f()) {
    if (!mu) return f();
    std::lock_guard l(*mu);
    return f();
  }
  bool read(uint64_t k) {
    char kb[8], out[64];
    key_bytes(k, kb);
    return lock_if([&] { return t->find(kb, 8, out); });
  }
  bool insert(uint64_t k, uint64_t v) {
    char kb[8];
    key_bytes(k, kb);
    return lock_if([&] { return t->insert(kb, 8, reinterpret_cast<const char*>(&v), 8); });
  }
  bool update(uint64_t k, uint64_t v) {
    char kb[8];
    key_bytes(k, kb);
    return lock_if([&] { return t->update(kb, 8, reinterpret_cast<const char*>(&v), 8); });
  }
  bool remove(uint64_t k) {
    char kb[8];
    key_bytes(k, kb);
    return lock_if([&] { return t->remove(kb, 8); });
  }
  size_t scan(uint64_t k, uint32_t n, record*) {
    char kb[8];
    key_bytes(k, kb);
    char* out = nullptr;
    int r = lock_if([&] { return t->scan(kb, 8, static_cast<int>(n), out); });
    return r > 0 ? static_cast<size_t>(r) : 0;
  }
  bool rmw(uint64_t k, uint64_t v) {
    char kb[8];
    key_bytes(k, kb);
    return lock_if([&] {
      uint64_t old = 0;
      if (!t->find(kb, 8, reinterpret_cast<char*>(&old))) return false;
      old ^= v;
      return t->update(kb, 8, reinterpret_cast<const char*>(&old), 8);
    });
  }

};

}  // namespace pmindex::bench

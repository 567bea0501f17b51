// What the run loop calls: thin, inlined adapters so that a pmindex index
// costs exactly one virtual call per operation. The loop is a template over
// the target type (no second virtual layer).
//   index_target   a pmindex::index (parallel modes shared and instance)
//   locked_target  a pmindex::index behind one global_lock (global-lock)
//   plugin_target  a PiBench tree_api wrapper, keys as PiBench lays them out
//                  (8-byte integers big-endian)
// Each has the u64 calls (the fast path) and the byte calls (bytes_*).
//
// Values on the u64 path: an insert writes value_of(key); an update or
// read-modify-write changes only the high 32 bits, so a lookup checks the
// low 32 bits against value_of(key) (u64_value_ok) at the cost of a multiply.
#pragma once

#include <atomic>
#include <cstdint>
#include <cstring>
#include <mutex>
#include <string>

#include "keys.hpp"
#include "pibench/tree_api.hpp"
#include "plugin.hpp"
#include "pmindex/index.hpp"

namespace pmindex::bench {

// The value an update writes: value_of(key) with `seq` in the high half.
inline uint64_t u64_update_value(uint64_t key, uint64_t seq) noexcept { return value_of(key) ^ (seq << 32); }
inline bool u64_value_ok(uint64_t key, uint64_t v) noexcept { return ((v ^ value_of(key)) & 0xFFFFFFFFu) == 0; }

// A lookup's outcome on the u64 path: found, and whether the value checked.
struct read_result {
  bool found = false, bad = false;
};

struct index_target {
  index* idx;
  read_result read(uint64_t k) {
    auto v = idx->lookup(k);
    return {v.has_value(), v && !u64_value_ok(k, *v)};
  }
  bool insert(uint64_t k, uint64_t v) { return idx->insert(k, v); }
  bool update(uint64_t k, uint64_t v) { return idx->update(k, v); }
  bool remove(uint64_t k) { return idx->remove(k); }
  size_t scan(uint64_t k, uint32_t n, record* buf) { return idx->scan(k, n, buf); }
  // Read-modify-write (YCSB F): read, then write a value derived from it.
  bool rmw(uint64_t k, uint64_t seq) {
    auto x = idx->lookup(k);
    return x && idx->update(k, *x ^ (seq << 32));
  }

  bool bytes_read(std::string_view k, std::string* out) { return idx->lookup(k, out); }
  bool bytes_insert(std::string_view k, std::string_view v) { return idx->insert(k, v); }
  bool bytes_update(std::string_view k, std::string_view v) { return idx->update(k, v); }
  bool bytes_remove(std::string_view k) { return idx->remove(k); }
  size_t bytes_scan(std::string_view k, uint32_t n, record_buffer& out) {
    out.clear();
    return idx->scan(k, n, out);
  }
};

// The lock of --parallel global-lock: one std::mutex, in DRAM (--lock dram)
// or constructed in a line of the index's pool (--lock pool), as the pmemids
// study's PMDK PMEMmutex is a pthread mutex in the pool. The same lock in both
// places, so the two runs differ only in where the lock word lives. Never
// flushed: a lock is not state to recover.
class global_lock {
 public:
  void in_pool(void* line) { mu_ = new (line) std::mutex; }
  void leave_pool() noexcept {
    if (mu_ != &dram_) mu_->~mutex();
    mu_ = &dram_;
  }
  bool pooled() const noexcept { return mu_ != &dram_; }
  void lock() { mu_->lock(); }
  void unlock() { mu_->unlock(); }

 private:
  std::mutex dram_;
  std::mutex* mu_ = &dram_;
};

struct locked_target {
  index_target t;
  global_lock* mu;
  read_result read(uint64_t k) { std::lock_guard l(*mu); return t.read(k); }
  bool insert(uint64_t k, uint64_t v) { std::lock_guard l(*mu); return t.insert(k, v); }
  bool update(uint64_t k, uint64_t v) { std::lock_guard l(*mu); return t.update(k, v); }
  bool remove(uint64_t k) { std::lock_guard l(*mu); return t.remove(k); }
  size_t scan(uint64_t k, uint32_t n, record* buf) { std::lock_guard l(*mu); return t.scan(k, n, buf); }
  bool rmw(uint64_t k, uint64_t seq) { std::lock_guard l(*mu); return t.rmw(k, seq); }

  bool bytes_read(std::string_view k, std::string* out) { std::lock_guard l(*mu); return t.bytes_read(k, out); }
  bool bytes_insert(std::string_view k, std::string_view v) { std::lock_guard l(*mu); return t.bytes_insert(k, v); }
  bool bytes_update(std::string_view k, std::string_view v) { std::lock_guard l(*mu); return t.bytes_update(k, v); }
  bool bytes_remove(std::string_view k) { std::lock_guard l(*mu); return t.bytes_remove(k); }
  size_t bytes_scan(std::string_view k, uint32_t n, record_buffer& out) {
    std::lock_guard l(*mu);
    return t.bytes_scan(k, n, out);
  }
};

struct plugin_target {
  tree_api* t;
  global_lock* mu = nullptr;  // global-lock mode
  size_t value_size = 8;     // what find() writes (tree_options_t::value_size)
  plugin::counters_fn ctr = nullptr;  // pmindex's own wrapper: its counters
  template <class F>
  auto lock_if(F&& f) -> decltype(f()) {
    if (!mu) {
      auto r = f();
      mirror();
      return r;
    }
    std::lock_guard l(*mu);
    auto r = f();
    mirror();
    return r;
  }
  // Adds what the wrapper's substrate counted on this thread since the last
  // call to the harness's own counters, which the run loop reads per op.
  void mirror() noexcept {
    if (!ctr) return;
    static thread_local pm::counters seen{};
    const pm::counters now = *ctr();
    pm::t_counters += now - seen;
    seen = now;
  }
  read_result read(uint64_t k) {
    char kb[8], out[64];
    key_bytes(k, kb);
    uint64_t v = 0;
    bool found = lock_if([&] { return t->find(kb, 8, out); });
    if (found) std::memcpy(&v, out, 8);
    return {found, found && !u64_value_ok(k, v)};
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
  bool rmw(uint64_t k, uint64_t seq) {
    char kb[8];
    key_bytes(k, kb);
    return lock_if([&] {
      char out[64];
      uint64_t old = 0;
      if (!t->find(kb, 8, out)) return false;
      std::memcpy(&old, out, 8);
      old ^= seq << 32;
      return t->update(kb, 8, reinterpret_cast<const char*>(&old), 8);
    });
  }

  // PiBench's find() writes value_size bytes and does not say how many: the
  // value read back has the run's value size.
  bool bytes_read(std::string_view k, std::string* out) {
    out->resize(value_size);
    return lock_if([&] { return t->find(k.data(), k.size(), out->data()); });
  }
  bool bytes_insert(std::string_view k, std::string_view v) {
    return lock_if([&] { return t->insert(k.data(), k.size(), v.data(), v.size()); });
  }
  bool bytes_update(std::string_view k, std::string_view v) {
    return lock_if([&] { return t->update(k.data(), k.size(), v.data(), v.size()); });
  }
  bool bytes_remove(std::string_view k) {
    return lock_if([&] { return t->remove(k.data(), k.size()); });
  }
  size_t bytes_scan(std::string_view k, uint32_t n, record_buffer&) {
    char* out = nullptr;
    int r = lock_if([&] { return t->scan(k.data(), k.size(), static_cast<int>(n), out); });
    return r > 0 ? static_cast<size_t>(r) : 0;
  }
};

}  // namespace pmindex::bench

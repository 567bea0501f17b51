// tbb-map baseline: oneTBB's tbb::concurrent_map (Debian libtbb-dev), a
// concurrent skip list, with a small lock in each entry, so that inserts,
// lookups, updates, removes and scans all run at once: the volatile DRAM
// index that scales, against which the persistent indexes are measured.
//
// What it is. concurrent_map links a node with one CAS per level and frees
// none while the map is shared: its only erase, unsafe_erase, must run alone.
// So a key's node, once linked, stays for the life of the index; a remove
// marks its entry absent (a tombstone) and a later insert revives it. All of
// one key's state (present flag and value) lives in its entry, behind the
// entry's lock:
//   keys=u64    a seqlock (sync::optimistic_lock, 8 bytes): writers take it;
//               readers read present + value and validate, writing nothing
//   keys=bytes  a reader-writer spin lock (common::rw_spin_lock, 4 bytes):
//               readers copy the std::string under the shared lock (an
//               optimistic copy could follow a buffer a writer just freed)
//
// Guarantees. Every operation is linearizable per key: finding a key's node
// is (nodes are linked atomically and never unlinked), and the rest is one
// critical section on the entry. A new key is linked with its entry already
// present, so an insert of a new key is its CAS. A scan (and range) is NOT an
// atomic snapshot: it walks the bottom level from lower_bound(from) and reads
// each entry by itself. Keys come sorted, without duplicates; each record
// returned held that value at some moment during the scan; a record present
// for the whole scan is returned; one inserted, updated or removed during the
// scan may or may not be, independently of the others. check() verifies the
// key order and that no tombstone holds a value; it may run beside writers.
//
// What it costs. No lock shared by all keys. An insert of a new key: a node
// (one allocation) and a CAS per level of it; the map's own size counter is
// one shared atomic. A lookup: a skip-list search, then the seqlock read (u64,
// no store) or a shared lock of the entry (bytes: an atomic add on the
// entry's cache line). Memory per record: the node (height and index words,
// the next pointers, about two on average) and the key and entry, u64 about
// 64 bytes; stats().dram_bytes counts the nodes through a counting allocator
// and the strings' heap blocks by capacity.
//
// Caveats. Tombstones are never reclaimed while the index is open: a removed
// key keeps its node (for keys=bytes without its value, whose heap block is
// freed), so a remove-heavy run over ever new keys grows by one node per key
// ever inserted, and scans step over the tombstones in their way.
// stats().records counts present records only; stats().extra "tombstones"
// counts the others, and dram_bytes includes them. The skip list's per-thread
// random level generators (tbb::enumerable_thread_specific) are not counted.
// Nothing is persistent: dram mode only, and a pool holds none of its data.
#pragma once

#include <oneapi/tbb/concurrent_map.h>

#include <algorithm>
#include <cstdint>
#include <functional>
#include <mutex>
#include <shared_mutex>
#include <string>
#include <string_view>
#include <tuple>
#include <type_traits>
#include <utility>

#include "baseline/dram_bytes.hpp"
#include "sync/rw_spin_lock.hpp"
#include "pmindex/index.hpp"
#include "sync/optimistic_lock.hpp"

namespace pmindex::baseline::detail {

// keys=u64: written under the seqlock, read optimistically (so the two
// fields are accessed atomically: a reader may race with a writer and
// discards what it read unless validate() holds).
struct u64_entry {
  sync::optimistic_lock lock{};
  uint64_t value;
  bool present = true;
  explicit u64_entry(uint64_t v) noexcept : value(v) {}
};

// keys=bytes: every access under the lock; a tombstone's value is empty
// with no heap block.
struct bytes_entry {
  common::rw_spin_lock lock;
  bool present = true;
  std::string value;
  explicit bytes_entry(std::string&& v) noexcept : value(std::move(v)) {}
};

// The map, K = uint64_t (keys=u64) or std::string (keys=bytes). `emit(k, v)`
// receives scanned records; `found(v)` a looked-up value.
template <class K>
class tbb_map {
  static constexpr bool k_u64 = std::is_same_v<K, uint64_t>;
  using in_t = std::conditional_t<k_u64, uint64_t, std::string_view>;
  using cmp = std::conditional_t<k_u64, std::less<uint64_t>, std::less<>>;
  using entry = std::conditional_t<k_u64, u64_entry, bytes_entry>;
  using alloc_t = counting_allocator<std::pair<const K, entry>, striped_counter>;
  using map_t = tbb::concurrent_map<K, entry, cmp, alloc_t>;

 public:
  tbb_map() : map_(cmp(), alloc_t(&node_bytes_)) {}

  // mode: 0 insert, 1 update, 2 upsert; returns whether the key was absent
  // (insert, upsert) or present (update) and so changed.
  bool write(int mode, in_t key, in_t value) {
    auto it = map_.find(key);
    if (it == map_.end()) {
      if (mode == 1) return false;
      if (auto [nit, linked] = link(key, value); linked) return true;
      else it = nit;  // another thread linked the key first: its entry decides
    }
    entry& e = it->second;
    bool was_present;
    if constexpr (k_u64) {
      std::lock_guard lk(e.lock);
      was_present = e.present;
      if (was_present ? mode == 0 : mode == 1) return false;
      __atomic_store_n(&e.value, value, __ATOMIC_RELAXED);
      __atomic_store_n(&e.present, true, __ATOMIC_RELAXED);
    } else {
      std::unique_lock lk(e.lock);
      was_present = e.present;
      if (was_present ? mode == 0 : mode == 1) return false;
      const int64_t before = string_heap_bytes(e.value.capacity());
      e.value.assign(value);  // may throw bad_alloc: the entry is unchanged then
      e.present = true;
      heap_bytes_.fetch_add(string_heap_bytes(e.value.capacity()) - before);
    }
    if (!was_present) live_.fetch_add(1);
    return mode == 1 || !was_present;
  }

  bool remove(in_t key) {
    auto it = map_.find(key);
    if (it == map_.end()) return false;
    entry& e = it->second;
    if constexpr (k_u64) {
      std::lock_guard lk(e.lock);
      if (!e.present) return false;
      __atomic_store_n(&e.present, false, __ATOMIC_RELAXED);
    } else {
      std::unique_lock lk(e.lock);
      if (!e.present) return false;
      heap_bytes_.fetch_sub(string_heap_bytes(e.value.capacity()));
      std::string().swap(e.value);  // a tombstone keeps no value
      e.present = false;
    }
    live_.fetch_sub(1);
    return true;
  }

  template <class F>
  bool lookup(in_t key, F&& found) {
    auto it = map_.find(key);
    return it != map_.end() && read(it->second, found);
  }

  // Up to `count` present records with key >= from, in key order.
  template <class F>
  size_t scan(in_t from, size_t count, F&& emit) {
    size_t n = 0;
    for (auto it = map_.lower_bound(from); n < count && it != map_.end(); ++it)
      n += read(it->second, [&](const auto& v) { emit(it->first, v); });
    return n;
  }
  template <class F>
  size_t range(in_t lo, in_t hi, F&& emit) {
    size_t n = 0;
    if (hi < lo) return 0;
    for (auto it = map_.lower_bound(lo); it != map_.end() && !(hi < it->first); ++it)
      n += read(it->second, [&](const auto& v) { emit(it->first, v); });
    return n;
  }

  check_result check() {
    const K* prev = nullptr;
    for (auto& [k, e] : map_) {
      if (prev && !(*prev < k)) return check_result::fail("keys out of order");
      prev = &k;
      if constexpr (!k_u64) {
        std::shared_lock lk(e.lock);
        if (!e.present && e.value.capacity() > 15)
          return check_result::fail("a removed entry keeps its value");
      }
    }
    return {};
  }

  index_stats stats() {
    index_stats s;
    const int64_t live = std::max<int64_t>(0, live_.load());
    s.records = static_cast<uint64_t>(live);
    const int64_t bytes = node_bytes_.load() + heap_bytes_.load();
    s.dram_bytes = static_cast<uint64_t>(std::max<int64_t>(0, bytes)) + sizeof(*this);
    const int64_t tombstones = std::max<int64_t>(0, static_cast<int64_t>(map_.size()) - live);
    s.extra.emplace_back("tombstones", static_cast<double>(tombstones));
    return s;
  }

 private:
  // Links a new node for `key` holding `value`; {its iterator, true}, or
  // {the node another thread linked first, false}.
  std::pair<typename map_t::iterator, bool> link(in_t key, in_t value) {
    if constexpr (k_u64) {
      auto r =
          map_.emplace(std::piecewise_construct, std::forward_as_tuple(key), std::forward_as_tuple(value));
      if (r.second) live_.fetch_add(1);
      return {r.first, r.second};
    } else {
      std::string v(value);  // its heap block, counted once the node is linked
      const int64_t v_heap = string_heap_bytes(v.capacity());
      auto r = map_.emplace(std::piecewise_construct, std::forward_as_tuple(key),
                            std::forward_as_tuple(std::move(v)));
      if (r.second) {
        live_.fetch_add(1);
        heap_bytes_.fetch_add(v_heap + string_heap_bytes(r.first->first.capacity()));  // the key is const
      }
      return {r.first, r.second};
    }
  }

  // Calls found(value) and returns true if the entry is present, as of one
  // moment (a validated seqlock read, or the shared lock).
  template <class F>
  static bool read(entry& e, F&& found) {
    if constexpr (k_u64) {
      for (;;) {
        const uint64_t v = e.lock.read_begin();
        const bool present = __atomic_load_n(&e.present, __ATOMIC_RELAXED);
        const uint64_t value = __atomic_load_n(&e.value, __ATOMIC_RELAXED);
        if (!e.lock.validate(v)) continue;
        if (present) found(value);
        return present;
      }
    } else {
      std::shared_lock lk(e.lock);
      if (e.present) found(e.value);
      return e.present;
    }
  }

  striped_counter node_bytes_, heap_bytes_, live_;
  map_t map_;
};

class tbb_u64_index final : public u64_index {
 public:
  explicit tbb_u64_index(pm::pool& p) : u64_index(p) {}
  using u64_index::insert, u64_index::update, u64_index::upsert, u64_index::remove, u64_index::lookup,
      u64_index::scan, u64_index::range;
  bool insert(uint64_t k, uint64_t v) override { return m_.write(0, k, v); }
  bool update(uint64_t k, uint64_t v) override { return m_.write(1, k, v); }
  bool upsert(uint64_t k, uint64_t v) override { return m_.write(2, k, v); }
  bool remove(uint64_t k) override { return m_.remove(k); }
  std::optional<uint64_t> lookup(uint64_t k) override {
    std::optional<uint64_t> r;
    m_.lookup(k, [&](uint64_t v) { r = v; });
    return r;
  }
  size_t scan(uint64_t from, size_t count, record* out) override {
    return m_.scan(from, count, [&](uint64_t k, uint64_t v) { *out++ = {k, v}; });
  }
  size_t range(uint64_t lo, uint64_t hi, std::vector<record>& out) override {
    return m_.range(lo, hi, [&](uint64_t k, uint64_t v) { out.push_back({k, v}); });
  }
  check_result check() override { return m_.check(); }
  void trace(pm::pool::trace_sink&) override {}  // nothing persistent
  index_stats stats() override { return m_.stats(); }

 private:
  tbb_map<uint64_t> m_;
};

class tbb_bytes_index final : public bytes_index {
 public:
  explicit tbb_bytes_index(pm::pool& p) : bytes_index(p) {}
  using bytes_index::insert, bytes_index::update, bytes_index::upsert, bytes_index::remove,
      bytes_index::lookup, bytes_index::scan, bytes_index::range;
  bool insert(std::string_view k, std::string_view v) override { return write(0, k, v); }
  bool update(std::string_view k, std::string_view v) override { return write(1, k, v); }
  bool upsert(std::string_view k, std::string_view v) override { return write(2, k, v); }
  bool remove(std::string_view k) override {
    check_key(k);
    return m_.remove(k);
  }
  bool lookup(std::string_view k, std::string* value) override {
    check_key(k);
    return m_.lookup(k, [&](const std::string& v) {
      if (value) value->assign(v);
    });
  }
  size_t scan(std::string_view from, size_t count, record_buffer& out) override {
    return m_.scan(from, count, [&](const std::string& k, const std::string& v) { out.push_back(k, v); });
  }
  size_t range(std::string_view lo, std::string_view hi, record_buffer& out) override {
    return m_.range(lo, hi, [&](const std::string& k, const std::string& v) { out.push_back(k, v); });
  }
  check_result check() override { return m_.check(); }
  void trace(pm::pool::trace_sink&) override {}
  index_stats stats() override { return m_.stats(); }

 private:
  bool write(int mode, std::string_view k, std::string_view v) {
    check_key(k);
    check_value(v);
    return m_.write(mode, k, v);
  }
  tbb_map<std::string> m_;
};

}  // namespace pmindex::baseline::detail

// A volatile ordered map behind a shared mutex, as a pmindex index: the body
// of the stdmap and btree-dram baselines (see baseline.hpp). One core for
// both key kinds: Map<uint64_t, uint64_t> (keys=u64) or Map<std::string,
// std::string> with a transparent comparator (keys=bytes).
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <shared_mutex>
#include <string>
#include <type_traits>

#include "baseline/dram_bytes.hpp"
#include "pmindex/index.hpp"

namespace pmindex::baseline::detail {

// The locked map, K = uint64_t or std::string; MapOf<K, V, Compare, Alloc>
// is std::map or absl::btree_map. `emit(k, v)` receives scanned records.
template <template <class, class, class, class> class MapOf, class K>
class locked_map {
  static constexpr bool k_u64 = std::is_same_v<K, uint64_t>;
  using cmp = std::conditional_t<k_u64, std::less<uint64_t>, std::less<>>;
  using alloc_t = counting_allocator<std::pair<const K, K>>;
  using in_t = std::conditional_t<k_u64, uint64_t, std::string_view>;

 public:
  locked_map() : map_(cmp(), alloc_t(&bytes_)) {}

  // mode: 0 insert, 1 update, 2 upsert; returns whether the key was absent
  // (insert, upsert) or present (update) and so changed.
  bool write(int mode, in_t key, in_t value) {
    std::unique_lock lk(mu_);
    auto it = map_.find(key);
    if (it == map_.end()) {
      if (mode == 1) return false;
      map_.emplace(K(key), K(value));
      add_heap(key, value, 1);
      return true;
    }
    if (mode == 0) return false;
    add_heap(key, in_t(it->second), -1);
    it->second = K(value);
    add_heap(key, value, 1);
    return mode == 1;
  }
  bool remove(in_t key) {
    std::unique_lock lk(mu_);
    auto it = map_.find(key);
    if (it == map_.end()) return false;
    add_heap(key, in_t(it->second), -1);
    map_.erase(it);
    return true;
  }
  template <class F>
  bool lookup(in_t key, F&& found) {
    std::shared_lock lk(mu_);
    auto it = map_.find(key);
    if (it == map_.end()) return false;
    found(it->second);
    return true;
  }
  template <class F>
  size_t scan(in_t from, size_t count, F&& emit) {
    std::shared_lock lk(mu_);
    size_t n = 0;
    for (auto it = map_.lower_bound(from); n < count && it != map_.end(); ++it, ++n) emit(it->first, it->second);
    return n;
  }
  template <class F>
  size_t range(in_t lo, in_t hi, F&& emit) {
    std::shared_lock lk(mu_);
    size_t n = 0;
    if (hi < lo) return 0;
    for (auto it = map_.lower_bound(lo); it != map_.end() && !(hi < it->first); ++it, ++n) emit(it->first, it->second);
    return n;
  }
  check_result check() {
    std::shared_lock lk(mu_);
    bool first = true;
    const K* prev = nullptr;
    for (auto& [k, v] : map_) {
      if (!first && !(*prev < k)) return check_result::fail("keys out of order");
      first = false;
      prev = &k;
    }
    return {};
  }
  index_stats stats() {
    std::shared_lock lk(mu_);
    index_stats s;
    s.records = map_.size();
    s.dram_bytes = static_cast<uint64_t>(bytes_.load(std::memory_order_relaxed) + heap_.load()) + sizeof(*this);
    return s;
  }

 private:
  // Heap bytes of strings too long for the small-string buffer.
  void add_heap(in_t key, in_t value, int64_t sign) {
    if constexpr (!k_u64) {
      const int64_t b = string_heap_bytes(key.size()) + string_heap_bytes(value.size());
      heap_.fetch_add(sign * b, std::memory_order_relaxed);
    }
  }
  std::atomic<int64_t> bytes_{0}, heap_{0};
  std::shared_mutex mu_;
  MapOf<K, K, cmp, alloc_t> map_;
};

template <template <class, class, class, class> class MapOf>
class locked_u64_index final : public u64_index {
 public:
  explicit locked_u64_index(pm::pool& p) : u64_index(p) {}
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
  locked_map<MapOf, uint64_t> m_;
};

template <template <class, class, class, class> class MapOf>
class locked_bytes_index final : public bytes_index {
 public:
  explicit locked_bytes_index(pm::pool& p) : bytes_index(p) {}
  using bytes_index::insert, bytes_index::update, bytes_index::upsert, bytes_index::remove, bytes_index::lookup,
      bytes_index::scan, bytes_index::range;
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
  locked_map<MapOf, std::string> m_;
};

}  // namespace pmindex::baseline::detail

// A volatile ordered map behind a shared mutex, as a pmindex index: the body
// of the stdmap and btree-dram baselines (see pmindex/baseline/baseline.hpp).
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <shared_mutex>
#include <string>

#include "pmindex/index.hpp"

namespace pmindex::baseline::detail {

// Counts the bytes a container's nodes take, for stats().dram_bytes.
template <class T>
struct counting_allocator {
  using value_type = T;
  std::atomic<int64_t>* bytes;
  explicit counting_allocator(std::atomic<int64_t>* b) noexcept : bytes(b) {}
  template <class U>
  counting_allocator(const counting_allocator<U>& o) noexcept : bytes(o.bytes) {}
  T* allocate(size_t n) {
    bytes->fetch_add(static_cast<int64_t>(n * sizeof(T)), std::memory_order_relaxed);
    return std::allocator<T>().allocate(n);
  }
  void deallocate(T* p, size_t n) noexcept {
    bytes->fetch_sub(static_cast<int64_t>(n * sizeof(T)), std::memory_order_relaxed);
    std::allocator<T>().deallocate(p, n);
  }
  template <class U>
  bool operator==(const counting_allocator<U>& o) const noexcept { return bytes == o.bytes; }
};

// Map: an ordered map<uint64_t, uint64_t> constructible from (compare, alloc).
template <template <class> class MapOf>
class locked_map_index final : public index {
  using map_t = MapOf<counting_allocator<std::pair<const uint64_t, uint64_t>>>;

 public:
  explicit locked_map_index(pm::pool& p) : index(p), map_(std::less<uint64_t>(), alloc_t(&bytes_)) {}

  bool insert(uint64_t key, uint64_t value) override {
    std::unique_lock lk(mu_);
    return map_.emplace(key, value).second;
  }
  bool update(uint64_t key, uint64_t value) override {
    std::unique_lock lk(mu_);
    auto it = map_.find(key);
    if (it == map_.end()) return false;
    it->second = value;
    return true;
  }
  bool upsert(uint64_t key, uint64_t value) override {
    std::unique_lock lk(mu_);
    auto [it, inserted] = map_.emplace(key, value);
    if (!inserted) it->second = value;
    return inserted;
  }
  bool remove(uint64_t key) override {
    std::unique_lock lk(mu_);
    return map_.erase(key) > 0;
  }
  std::optional<uint64_t> lookup(uint64_t key) override {
    std::shared_lock lk(mu_);
    auto it = map_.find(key);
    if (it == map_.end()) return std::nullopt;
    return it->second;
  }
  size_t scan(uint64_t from, size_t count, record* out) override {
    std::shared_lock lk(mu_);
    size_t n = 0;
    for (auto it = map_.lower_bound(from); n < count && it != map_.end(); ++it) out[n++] = {it->first, it->second};
    return n;
  }
  size_t range(uint64_t lo, uint64_t hi, std::vector<record>& out) override {
    std::shared_lock lk(mu_);
    size_t n0 = out.size();
    if (lo > hi) return 0;
    for (auto it = map_.lower_bound(lo); it != map_.end() && it->first <= hi; ++it)
      out.push_back({it->first, it->second});
    return out.size() - n0;
  }
  check_result check() override {
    std::shared_lock lk(mu_);
    bool first = true;
    uint64_t prev = 0;
    for (auto& [k, v] : map_) {
      if (!first && k <= prev) return check_result::fail("keys out of order at " + std::to_string(k));
      first = false;
      prev = k;
    }
    return {};
  }
  void trace(pm::pool::trace_sink&) override {}  // nothing persistent
  index_stats stats() override {
    std::shared_lock lk(mu_);
    index_stats s;
    s.records = map_.size();
    s.dram_bytes = static_cast<uint64_t>(bytes_.load(std::memory_order_relaxed)) + sizeof(*this);
    return s;
  }

 private:
  using alloc_t = counting_allocator<std::pair<const uint64_t, uint64_t>>;
  std::atomic<int64_t> bytes_{0};
  std::shared_mutex mu_;
  map_t map_;
};

}  // namespace pmindex::baseline::detail

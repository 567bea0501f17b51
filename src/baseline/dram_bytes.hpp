// How the baselines count the DRAM they hold, for stats().dram_bytes: an
// allocator that adds every node's bytes to a counter, the heap bytes of a
// std::string, and a counter that many threads bump without sharing a cache
// line.
#pragma once

#include <array>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

namespace pmindex::baseline::detail {

// Counts the bytes a container's nodes take. Counter: std::atomic<int64_t>
// (the locked maps, whose writers are serialized anyway) or striped_counter
// (a map that concurrent writers share).
template <class T, class Counter = std::atomic<int64_t>>
struct counting_allocator {
  using value_type = T;
  Counter* bytes;
  explicit counting_allocator(Counter* b) noexcept : bytes(b) {}
  template <class U>
  counting_allocator(const counting_allocator<U, Counter>& o) noexcept : bytes(o.bytes) {}
  T* allocate(size_t n) {
    T* p = std::allocator<T>().allocate(n);
    bytes->fetch_add(static_cast<int64_t>(n * sizeof(T)), std::memory_order_relaxed);
    return p;
  }
  void deallocate(T* p, size_t n) noexcept {
    bytes->fetch_sub(static_cast<int64_t>(n * sizeof(T)), std::memory_order_relaxed);
    std::allocator<T>().deallocate(p, n);
  }
  template <class U>
  bool operator==(const counting_allocator<U, Counter>& o) const noexcept {
    return bytes == o.bytes;
  }
};

// The heap block of a std::string of this capacity: none while it fits the
// small-string buffer (15 characters in libstdc++), else capacity + 1.
inline int64_t string_heap_bytes(size_t capacity) noexcept {
  return capacity > 15 ? static_cast<int64_t>(capacity) + 1 : 0;
}

// A sum that threads add to concurrently: each thread adds to one of
// k_stripes cache lines (chosen once per thread), load() adds them up. One
// shared atomic would move its cache line between the cores on every insert
// and remove, which is the serialization a concurrent map is meant to avoid.
// load() beside writers is some value the sum passed through, or close to it
// (the stripes are read one after the other).
class striped_counter {
 public:
  void fetch_add(int64_t d, std::memory_order o = std::memory_order_relaxed) noexcept {
    stripes_[stripe()].v.fetch_add(d, o);
  }
  void fetch_sub(int64_t d, std::memory_order o = std::memory_order_relaxed) noexcept { fetch_add(-d, o); }
  int64_t load() const noexcept {
    int64_t s = 0;
    for (auto& x : stripes_) s += x.v.load(std::memory_order_relaxed);
    return s;
  }

 private:
  static constexpr size_t k_stripes = 16;
  static size_t stripe() noexcept {
    static std::atomic<size_t> next{0};
    thread_local const size_t mine = next.fetch_add(1, std::memory_order_relaxed) % k_stripes;
    return mine;
  }
  struct alignas(64) stripe_t {
    std::atomic<int64_t> v{0};
  };
  std::array<stripe_t, k_stripes> stripes_{};
};

}  // namespace pmindex::baseline::detail

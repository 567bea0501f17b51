// Size classes of the pool allocator. Every block of 64 bytes or more is a
// multiple of 64 bytes and starts on a cache line, so an index can reason
// about flushes per node; smaller blocks are 16-byte aligned.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>

namespace pmindex::alloc {

inline constexpr std::array<uint32_t, 23> k_class_sizes = {
    16,   32,   48,   64,   128,  192,  256,  320,  384,  448,  512, 640,
    768,  896,  1024, 1280, 1536, 1792, 2048, 2560, 3072, 3584, 4096};
inline constexpr size_t k_nclasses = k_class_sizes.size();
inline constexpr size_t k_max_small = 4096;

namespace detail {
constexpr std::array<uint8_t, k_max_small / 16 + 1> make_class_table() {
  std::array<uint8_t, k_max_small / 16 + 1> t{};
  size_t c = 0;
  for (size_t i = 0; i < t.size(); ++i) {
    while (k_class_sizes[c] < i * 16) ++c;
    t[i] = static_cast<uint8_t>(c);
  }
  return t;
}
inline constexpr auto k_class_table = make_class_table();
}  // namespace detail

// The class of a small request (1..k_max_small bytes).
constexpr unsigned class_of(size_t n) noexcept {
  return detail::k_class_table[(n + 15) / 16];
}
constexpr uint32_t class_size(unsigned cls) noexcept { return k_class_sizes[cls]; }

}  // namespace pmindex::alloc

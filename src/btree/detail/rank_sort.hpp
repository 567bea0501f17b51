// Ordering one unsorted leaf's records for a scan (FPTree when a leaf's scan
// order hint is stale, LB+-Tree always: hybrid_core.hpp): a leaf
// holds at most 64 records with distinct keys, so a record's place in the
// output is the number of keys smaller than its own. Counting that for every
// record is m*m compares, but they have no data-dependent branches and run
// 8 (AVX-512) or 4 (AVX2) at a time, where a comparison sort of 30-60 random
// keys mispredicts about every other branch (std::sort was half of a
// scan100's time, perf on `pmindex bench --index fptree --workload scan=1:100`).
#pragma once

#include <immintrin.h>

#include <algorithm>
#include <bit>
#include <cstddef>
#include <cstdint>


namespace pmindex::btree::detail {

// keys[] holds m <= 64 distinct keys, padded with UINT64_MAX to a multiple of
// 8; rank[i] gets the number of keys[j] < keys[i].
__attribute__((target("avx512f"), noinline)) inline void key_ranks_avx512(const uint64_t* keys, size_t m,
                                                                          uint8_t* rank) noexcept {
  const size_t blocks = (m + 7) / 8;
  for (size_t i = 0; i < m; ++i) {
    __m512i k = _mm512_set1_epi64(static_cast<long long>(keys[i]));
    unsigned r = 0;
    for (size_t b = 0; b < blocks; ++b)
      r += std::popcount(static_cast<unsigned>(_mm512_cmplt_epu64_mask(_mm512_loadu_si512(keys + 8 * b), k)));
    rank[i] = static_cast<uint8_t>(r);
  }
}
__attribute__((target("avx2"), noinline)) inline void key_ranks_avx2(const uint64_t* keys, size_t m,
                                                                     uint8_t* rank) noexcept {
  // AVX2 compares signed 64-bit words: flipping the top bit of both sides
  // gives the unsigned order.
  const __m256i flip = _mm256_set1_epi64x(static_cast<long long>(0x8000000000000000ull));
  const size_t blocks = (m + 3) / 4;
  for (size_t i = 0; i < m; ++i) {
    __m256i k = _mm256_xor_si256(_mm256_set1_epi64x(static_cast<long long>(keys[i])), flip);
    __m256i acc = _mm256_setzero_si256();
    for (size_t b = 0; b < blocks; ++b) {
      __m256i x = _mm256_xor_si256(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(keys + 4 * b)), flip);
      acc = _mm256_sub_epi64(acc, _mm256_cmpgt_epi64(k, x));  // -1 where keys[j] < keys[i]
    }
    alignas(32) uint64_t lanes[4];
    _mm256_store_si256(reinterpret_cast<__m256i*>(lanes), acc);
    rank[i] = static_cast<uint8_t>(lanes[0] + lanes[1] + lanes[2] + lanes[3]);
  }
}
inline void key_ranks_scalar(const uint64_t* keys, size_t m, uint8_t* rank) noexcept {
  for (size_t i = 0; i < m; ++i) {
    unsigned r = 0;
    for (size_t j = 0; j < m; ++j) r += keys[j] < keys[i];
    rank[i] = static_cast<uint8_t>(r);
  }
}

// rank[i] = the number of keys[j] < keys[i], for m <= 64 distinct keys, with
// the widest SIMD the CPU has. keys[] must have room for m rounded up to 8
// words: the padding is written here. GCC cannot see that the variants read
// only that padded prefix and warns; padding all 64 words instead cost
// LB+-Tree's scan1000 (10 records a leaf) about a tenth.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
inline void key_ranks(uint64_t* keys, size_t m, uint8_t* rank) noexcept {
  for (size_t i = m; i < ((m + 7) & ~size_t{7}); ++i) keys[i] = UINT64_MAX;
  if (__builtin_cpu_supports("avx512f"))
    key_ranks_avx512(keys, m, rank);
  else if (__builtin_cpu_supports("avx2"))
    key_ranks_avx2(keys, m, rank);
  else
    key_ranks_scalar(keys, m, rank);
}
#pragma GCC diagnostic pop

}  // namespace pmindex::btree::detail

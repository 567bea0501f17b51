// One-byte key fingerprints and their SIMD comparison (FPTree, LB+-Tree):
// a leaf search compares the fingerprints of all slots at once and reads
// only the keys whose fingerprint matches (~1 key per search).
#pragma once

#include <immintrin.h>

#include <cstdint>
#include <cstring>

#include "common/atomics.hpp"

namespace pmindex::btree::detail {

inline uint8_t fingerprint(uint64_t key) noexcept {
  // Multiplicative hash; the top byte mixes every key bit.
  return static_cast<uint8_t>((key * 0x9E3779B97F4A7C15ull) >> 56);
}

// Bit i set iff p[i] == b, for i < 64. Reads 64 bytes at p.
//
// The build targets x86-64-v2 (SSE4.2) so that one binary runs everywhere,
// so the wide compares are chosen at run time: AVX-512BW (one compare), AVX2
// (two), else SSE2 (four). libgcc reads the CPU features once, before main
// (cpuid, and xgetbv for the OS's AVX state); each call tests one bit of
// that table, a branch that always goes the same way. AVX-512 is used only
// where present. The AVX versions are out-of-line functions compiled for
// their target (a caller built for x86-64-v2 cannot inline them).
__attribute__((target("avx512bw"), noinline)) inline uint64_t match_bytes64_avx512(const uint8_t* p,
                                                                                   uint8_t b) noexcept {
  return _mm512_cmpeq_epi8_mask(_mm512_loadu_si512(p), _mm512_set1_epi8(static_cast<char>(b)));
}
__attribute__((target("avx2"), noinline)) inline uint64_t match_bytes64_avx2(const uint8_t* p, uint8_t b) noexcept {
  __m256i x = _mm256_set1_epi8(static_cast<char>(b));
  uint32_t lo = _mm256_movemask_epi8(_mm256_cmpeq_epi8(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(p)), x));
  uint32_t hi = _mm256_movemask_epi8(
      _mm256_cmpeq_epi8(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(p + 32)), x));
  return uint64_t{lo} | uint64_t{hi} << 32;
}
inline uint64_t match_bytes64_sse2(const uint8_t* p, uint8_t b) noexcept {
  __m128i x = _mm_set1_epi8(static_cast<char>(b));
  uint64_t m = 0;
  for (int i = 0; i < 4; ++i)
    m |= uint64_t(uint32_t(_mm_movemask_epi8(
             _mm_cmpeq_epi8(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p + 16 * i)), x))))
         << (16 * i);
  return m;
}
inline uint64_t match_bytes64(const uint8_t* p, uint8_t b) noexcept {
  if (__builtin_cpu_supports("avx512bw")) return match_bytes64_avx512(p, b);
  if (__builtin_cpu_supports("avx2")) return match_bytes64_avx2(p, b);
  return match_bytes64_sse2(p, b);
}

// Bit i set iff p[i] == b, for i < 16. Reads 16 bytes at p.
inline uint32_t match_bytes16(const uint8_t* p, uint8_t b) noexcept {
#if defined(__SSE2__)
  return static_cast<uint32_t>(_mm_movemask_epi8(
      _mm_cmpeq_epi8(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)), _mm_set1_epi8(static_cast<char>(b)))));
#else
  uint32_t m = 0;
  for (int i = 0; i < 16; ++i) m |= uint32_t{p[i] == b} << i;
  return m;
#endif
}

using common::load_acq;
using common::load_relaxed;
using common::store_rel;
using common::store_relaxed;

}  // namespace pmindex::btree::detail

// Random numbers of the harness, the checkers (crash, stress, snapshot,
// damage) and the command line: a small, fast generator per thread
// (xoshiro256**, seeded through splitmix64) and the bijective mixers the key
// universes and the scrambled Zipfian use. Everything here is deterministic
// from its seed, so a run is reproducible from --seed.
#pragma once

#include <cstdint>

#include "pmindex/util/hash.hpp"

namespace pmindex::bench {

using util::mix64;
using util::splitmix64;

// A bijection of [0, 2^bits): xor-shift and odd multiplications, each a
// bijection modulo 2^bits (bits in [8, 64]).
inline uint64_t mix_bits(uint64_t x, unsigned bits) noexcept {
  const uint64_t mask = bits >= 64 ? ~uint64_t{0} : (uint64_t{1} << bits) - 1;
  const unsigned s = bits / 2;
  x &= mask;
  x ^= x >> s;
  x = (x * 0xff51afd7ed558ccdull) & mask;
  x ^= x >> s;
  x = (x * 0xc4ceb9fe1a85ec53ull) & mask;
  x ^= x >> s;
  return x;
}

class rng {
 public:
  // A UniformRandomBitGenerator, so std::shuffle and the distributions take it.
  using result_type = uint64_t;
  static constexpr uint64_t min() noexcept { return 0; }
  static constexpr uint64_t max() noexcept { return ~uint64_t{0}; }
  uint64_t operator()() noexcept { return next(); }

  explicit rng(uint64_t seed = 1) noexcept { reseed(seed); }
  void reseed(uint64_t seed) noexcept {
    for (auto& w : s_) w = splitmix64(seed);
  }
  uint64_t next() noexcept {
    const uint64_t r = rotl(s_[1] * 5, 7) * 9;
    const uint64_t t = s_[1] << 17;
    s_[2] ^= s_[0];
    s_[3] ^= s_[1];
    s_[1] ^= s_[2];
    s_[0] ^= s_[3];
    s_[2] ^= t;
    s_[3] = rotl(s_[3], 45);
    return r;
  }
  // Uniform in [0, n) for any n >= 1 (multiply-high; bias < n / 2^64).
  uint64_t below(uint64_t n) noexcept {
    return static_cast<uint64_t>((static_cast<unsigned __int128>(next()) * n) >> 64);
  }
  // Uniform in [0, 1) with 53 random bits.
  double unit() noexcept { return static_cast<double>(next() >> 11) * 0x1.0p-53; }

 private:
  static uint64_t rotl(uint64_t x, int k) noexcept { return (x << k) | (x >> (64 - k)); }
  uint64_t s_[4];
};

// The seed of thread t's generator for purpose `stream` (prefill, run, ...):
// distinct per thread and reproducible from the run's --seed.
inline uint64_t thread_seed(uint64_t seed, uint32_t thread, uint32_t stream) noexcept {
  return mix64(seed * 0x9E3779B97F4A7C15ull + (uint64_t{stream} << 32) + thread + 1);
}

}  // namespace pmindex::bench

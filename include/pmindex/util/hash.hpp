// Small integer hashes shared by the tools, the harness and the tests.
#pragma once

#include <cstdint>

namespace pmindex::util {

// murmur3's 64-bit finaliser: a bijection of the 64-bit integers, so
// distinct inputs give distinct outputs (key sequences rely on it).
constexpr uint64_t mix64(uint64_t x) noexcept {
  x ^= x >> 33;
  x *= 0xff51afd7ed558ccdull;
  x ^= x >> 33;
  x *= 0xc4ceb9fe1a85ec53ull;
  x ^= x >> 33;
  return x;
}

// SplitMix64's output function (Steele, Lea, Flood): also a bijection, with
// an added odd constant so that 0 maps to a well-mixed word.
constexpr uint64_t splitmix_mix(uint64_t x) noexcept {
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

// SplitMix64 as a generator: advances the state, returns the next word.
// Expands one 64-bit seed into well-mixed words (seeding other generators).
constexpr uint64_t splitmix64(uint64_t& state) noexcept {
  const uint64_t x = splitmix_mix(state);
  state += 0x9E3779B97F4A7C15ull;
  return x;
}

}  // namespace pmindex::util

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

}  // namespace pmindex::util

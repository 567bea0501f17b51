// The order of byte keys (bytes unsigned, a prefix first: std::string_view's
// operator<), reached mostly through one 8-byte word. key_prefix(s) is the
// first 8 bytes of s, big-endian, zero-padded; it orders like the keys it
// starts (a <= b implies prefix(a) <= prefix(b)), so unequal prefixes decide
// a compare and only a tie reads the keys' bytes. The B-trees store it in
// their slots (btree/detail/keys.hpp); scans compare with key_less, whose
// inline path replaced a library memcmp call that was 14% of a ROART ycsb-e
// run.
#pragma once

#include <cstdint>
#include <cstring>
#include <string_view>

namespace pmindex::common {

inline uint64_t key_prefix(std::string_view s) noexcept {
  uint64_t w = 0;
  if (s.size() >= 8)
    std::memcpy(&w, s.data(), 8);  // one fixed load: the common case (every u64 key)
  else if (!s.empty())
    std::memcpy(&w, s.data(), s.size());
  return __builtin_bswap64(w);
}

// a < b as std::string_view's operator<, by the prefixes first.
inline bool key_less(std::string_view a, std::string_view b) noexcept {
  const uint64_t x = key_prefix(a), y = key_prefix(b);
  return x != y ? x < y : a < b;
}

}  // namespace pmindex::common

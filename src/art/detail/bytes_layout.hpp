// The byte-key layout of the WORT family (keys=bytes): digits of byte
// strings, the node header of this layout, and leaves as kv blocks. The node
// kinds are those of the u64 layout plus one END-OF-KEY word each
// (nodes.hpp), so a key may be a proper prefix of another.
//
// A key of n bytes is a string of n * 8 / span digits, most significant
// first (WORT: two 4-bit digits per byte, high nibble first; WOART and
// ART+CoW: one digit per byte), so digit order is byte order. A node at
// depth d with a prefix of p digits branches on digit b = d + p; a key of
// exactly b digits that shares the node's path is its end-of-key leaf;
// every other key below it is longer than b digits.
//
// The node header, written with ONE atomic store (as in layout.hpp, with
// wider fields: 16 bits hold the 8193 digit positions of a 4096-byte key in
// 4-bit digits):
//   bits  0..15  depth: the digit position of the node's first prefix digit
//   bits 16..31  prefix length in digits
//   bits 32..63  the first min(len, 32 / span) prefix digits, packed with the
//                last stored digit in the lowest bits
//
// A leaf is the kv block (common/kv_block.hpp) {klen, vlen, key, value} the
// tagged child word names: written and flushed before the store that
// publishes it, never changed afterwards. An update writes a new block and
// swings the one word that points to it; the old block is retired once the
// swing is durable.
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <string_view>

#include "art/detail/layout.hpp"
#include "art/detail/nodes.hpp"
#include "common/kv_block.hpp"
#include "pmindex/pm/pool.hpp"

namespace pmindex::art::detail {

template <unsigned Span>
struct byte_digits {
  static constexpr unsigned k_span = Span;
  static constexpr unsigned k_per_byte = 8 / Span;
  static constexpr unsigned k_fanout = 1u << Span;
  static constexpr unsigned k_stored = 32 / Span;  // prefix digits kept in the header
  static constexpr uint64_t k_digit_mask = k_fanout - 1;
  static constexpr unsigned k_max_position = 0xffff;

  static unsigned length(std::string_view k) { return unsigned(k.size()) * k_per_byte; }
  static unsigned at(std::string_view k, unsigned pos) {
    unsigned b = uint8_t(k[pos / k_per_byte]);
    if constexpr (Span == 8) return b;
    return pos & 1 ? b & 15 : b >> 4;
  }
  // Digit `pos` of k, or k_end (nodes.hpp) where k ends there.
  static unsigned at_or_end(std::string_view k, unsigned pos) {
    return pos == length(k) ? k_end : at(k, pos);
  }
  // The first digit position where a and b differ or the shorter one ends
  // (their common length if equal), looking from the byte that holds digit
  // `from` on (the digits before it are known to agree).
  static unsigned first_diff(std::string_view a, std::string_view b, unsigned from = 0) {
    size_t n = std::min(a.size(), b.size());
    for (size_t i = from / k_per_byte; i < n; ++i) {
      if (a[i] == b[i]) continue;
      if constexpr (Span == 8) return unsigned(i);
      return unsigned(i) * 2 + ((uint8_t(a[i] ^ b[i]) & 0xf0) == 0);
    }
    return unsigned(n) * k_per_byte;
  }

  static header decode(uint64_t w) { return {uint32_t(w & 0xffff), uint32_t((w >> 16) & 0xffff), w >> 32}; }
  // The header word of a node at `depth` with a prefix of `plen` digits,
  // taken from `ref` (any key that has the prefix).
  static uint64_t make_header(unsigned depth, unsigned plen, std::string_view ref) {
    unsigned n = std::min(plen, k_stored);
    uint64_t stored = 0;
    for (unsigned i = 0; i < n; ++i) stored = stored << Span | at(ref, depth + i);
    return uint64_t{depth} | uint64_t{plen} << 16 | stored << 32;
  }
  static unsigned stored_count(const header& h) { return std::min(h.plen, k_stored); }
  // Stored prefix digit i (i < stored_count(h)), i.e. digit h.depth + i.
  static unsigned stored_digit(const header& h, unsigned i) {
    return unsigned(h.prefix >> (Span * (stored_count(h) - 1 - i))) & k_digit_mask;
  }
  // True if the stored prefix digits of `h` agree with `key`, which has at
  // least h.depth + h.plen digits.
  static bool stored_prefix_matches(const header& h, std::string_view key) {
    unsigned n = stored_count(h);
    uint64_t mine = 0;
    for (unsigned i = 0; i < n; ++i) mine = mine << Span | at(key, h.depth + i);
    return mine == h.prefix;
  }
};

// Writes the kv block of a new leaf at `off` (allocated with
// kv_block_bytes(key.size(), value.size())); the caller flushes it.
inline void fill_leaf(pm::pool& p, uint64_t off, std::string_view key, std::string_view value) {
  auto* b = p.ptr<common::kv_block>(off);
  b->klen = uint32_t(key.size());
  b->vlen = uint32_t(value.size());
  if (!key.empty()) std::memcpy(b->data, key.data(), key.size());
  if (!value.empty()) std::memcpy(b->data + key.size(), value.data(), value.size());
}

}  // namespace pmindex::art::detail

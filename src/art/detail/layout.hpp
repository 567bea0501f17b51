// Shared persistent layout of the WORT family (WORT, WOART, ART+CoW):
// tagged child words, the 8-byte node header, leaves, the root block, and
// the digit arithmetic on 64-bit keys. Node kinds live in node4.hpp,
// node16.hpp, node48.hpp and node_direct.hpp.
//
// Keys (keys=u64; bytes_layout.hpp is the byte-key layout) are unsigned
// 64-bit integers compared numerically, so a key is read as a string of
// `span`-bit digits from the most significant end (WORT: 16 digits of 4
// bits, WOART/ART+CoW: 8 digits of 8 bits).
#pragma once

#include <bit>
#include <cstdint>

namespace pmindex::art::detail {

// A child word: the pool offset of a block (16-byte aligned, so the low four
// bits are free) ORed with the block's kind. 0 is "no child". Because the
// kind travels with the pointer, growing a node (new kind) is still one
// 8-byte store in the parent.
enum kind : uint64_t { k_leaf = 1, k_n4 = 2, k_n16 = 3, k_n48 = 4, k_direct = 5 };
inline constexpr uint64_t k_tag_mask = 15;
inline constexpr kind kind_of(uint64_t w) { return static_cast<kind>(w & k_tag_mask); }
inline constexpr uint64_t off_of(uint64_t w) { return w & ~k_tag_mask; }
inline constexpr uint64_t tag(uint64_t off, kind k) { return off | k; }
inline constexpr bool is_leaf(uint64_t w) { return kind_of(w) == k_leaf; }

// clang-format off
// A record. 16 bytes, one cache line (16-byte blocks never straddle one).
struct leaf {
  uint64_t key;    //  0  fixed at creation
  uint64_t value;  //  8  an update is one 8-byte store + persist
};
inline constexpr uint64_t k_leaf_size = 16;

// The root block, set once as the pool root.
struct root_block {
  uint64_t magic;  //  0  identifies the variant
  uint64_t child;  //  8  tagged child word: the whole tree (0 = empty)
  uint64_t pad[6]; // 16  (one line)
};
// clang-format on

// The 8-byte node header, written with ONE atomic store:
//   bits  0.. 7  depth: the digit position of the node's first prefix digit
//   bits  8..15  prefix length in digits
//   bits 16..63  the first min(len, 48 / span) prefix digits, packed with the
//                last stored digit in the lowest bits
// A node at depth d with prefix length p branches on digit d + p. The depth
// is what lets a traversal detect a half-done WORT/WOART split (the header
// already says the node sits lower than where it is found; see tree_write).
struct header {
  uint32_t depth;
  uint32_t plen;
  uint64_t prefix;  // the stored digits
};
inline constexpr header decode(uint64_t w) { return {uint32_t(w & 0xff), uint32_t((w >> 8) & 0xff), w >> 16}; }

// Digit arithmetic for a given span (bits per digit).
template <unsigned Span>
struct digits {
  static constexpr unsigned k_span = Span;
  static constexpr unsigned k_levels = 64 / Span;     // digits in a key
  static constexpr unsigned k_fanout = 1u << Span;
  static constexpr unsigned k_stored = 48 / Span;     // prefix digits kept in the header
  static constexpr uint64_t k_digit_mask = k_fanout - 1;

  static constexpr unsigned at(uint64_t key, unsigned pos) {
    return unsigned((key >> (64 - Span * (pos + 1))) & k_digit_mask);
  }
  // Mask of the key bits holding digits [a, b).
  static constexpr uint64_t mask(unsigned a, unsigned b) {
    if (a >= b) return 0;
    uint64_t hi = ~uint64_t{0} >> (Span * a);
    uint64_t lo = b >= k_levels ? ~uint64_t{0} : ~uint64_t{0} << (64 - Span * b);
    return hi & lo;
  }
  // Position of the first digit where a and b differ (k_levels if equal).
  static constexpr unsigned first_diff(uint64_t a, uint64_t b) {
    return a == b ? k_levels : unsigned(std::countl_zero(a ^ b)) / Span;
  }
  // The header word of a node at `depth` with a prefix of `plen` digits,
  // taken from `ref` (any key that has the prefix).
  static constexpr uint64_t make_header(unsigned depth, unsigned plen, uint64_t ref) {
    unsigned n = plen < k_stored ? plen : k_stored;
    uint64_t stored = n ? (ref & mask(depth, depth + n)) >> (64 - Span * (depth + n)) : 0;
    return uint64_t{depth} | uint64_t{plen} << 8 | stored << 16;
  }
  // True if the stored prefix digits of `h` agree with `key`.
  static constexpr bool stored_prefix_matches(const header& h, uint64_t key) {
    unsigned n = h.plen < k_stored ? h.plen : k_stored;
    if (!n) return true;
    return ((key & mask(h.depth, h.depth + n)) >> (64 - Span * (h.depth + n))) == h.prefix;
  }
  // `key` with digits [h.depth, h.depth + h.plen) replaced by the prefix of
  // `h`; valid only when the whole prefix is stored (plen <= k_stored).
  static constexpr uint64_t with_stored_prefix(const header& h, uint64_t key) {
    unsigned b = h.depth + h.plen;
    uint64_t m = mask(h.depth, b);
    return (key & ~m) | (h.plen ? h.prefix << (64 - Span * b) : 0);
  }
};

}  // namespace pmindex::art::detail

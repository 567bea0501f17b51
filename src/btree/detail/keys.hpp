// The two key kinds of the hybrid B+-trees (FPTree, LB+-Tree): one leaf
// algorithm and one tree core, templates over these policies. A leaf slot is
// two 8-byte words {key, value}:
//
//   keys=u64    key = the key; value = the value (an update stores it in place)
//   keys=bytes  key = the key's prefix (its first 8 bytes, big-endian,
//               zero-padded); value = offset of the record's kv block (key
//               and value bytes, common/kv_block.hpp). An update writes a new
//               block and swings this word (the 8-byte commit).
//
// A leaf's low fence word is the low key (u64), or the offset of a key block
// holding it (bytes; 0 is the empty key, the head leaf's). Prefixes order
// like the keys they start (a <= b implies prefix(a) <= prefix(b)), so a byte
// key is compared by its prefix first and by its bytes only on a tie; a slot
// is matched by its fingerprint (of the whole key), then its prefix word,
// and only then are the key's bytes read.
//
// u64_keys is plain integer arithmetic: the u64 layout compiles to what a
// u64-only tree would (same PM format, same loads, stores and flushes).
#pragma once

#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>

#include "btree/detail/fingerprint.hpp"
#include "common/key_order.hpp"
#include "common/kv_block.hpp"
#include "pmindex/pm/pool.hpp"

namespace pmindex::btree::detail {

// clang-format off
struct entry {
  uint64_t key;    //  0  u64: the key; bytes: the key's prefix
  uint64_t value;  //  8  u64: the value; bytes: kv block offset. An update is one 8-byte store of it
};
// clang-format on

struct u64_keys {
  static constexpr bool k_blocks = false;  // records live in the leaf
  using key = uint64_t;                    // a key as compared (slot key, fence, search key)
  using probe = uint64_t;                  // a search key
  using probe_arg = uint64_t;
  static constexpr key k_min = 0;

  static uint8_t fp(probe k) noexcept { return fingerprint(k); }
  static uint8_t fp_of(key k) noexcept { return fingerprint(k); }
  static uint64_t key_word(probe k) noexcept { return k; }
  static key of(const pm::pool&, uint64_t kw, uint64_t) noexcept { return kw; }
  static key low(const pm::pool&, uint64_t w) noexcept { return w; }
  static bool less(key a, key b) noexcept { return a < b; }
  static bool matches(const pm::pool&, const entry* e, probe k) noexcept { return load_relaxed(&e->key) == k; }
  static uint64_t make_low(pm::pool&, key k) noexcept { return k; }
  static std::string describe(key k) { return "key " + std::to_string(k); }
  static probe probe_of(key k) noexcept { return k; }

  // The DRAM inner layer: a separator is one word.
  static constexpr bool k_refs = false;
  static constexpr bool k_dram_separators = false;
  static uint64_t word(key k) noexcept { return k; }
  static uint64_t ref(key) noexcept { return 0; }
  static key from_words(uint64_t w, uint64_t) noexcept { return w; }
  static bool le(uint64_t w, uint64_t, probe k) noexcept { return w <= k; }  // separator <= k
  static bool lt(uint64_t w, uint64_t, probe k) noexcept { return w < k; }   // separator < k
};

// The first 8 bytes of a key, big-endian, zero-padded (common/key_order.hpp).
using common::key_prefix;

// One-byte fingerprint of a whole byte key (its length included, so "a" and
// "a\0" differ).
inline uint8_t fingerprint(std::string_view s) noexcept {
  constexpr uint64_t k_mul = 0x9E3779B97F4A7C15ull;
  uint64_t h = (s.size() + 1) * k_mul;
  size_t i = 0;
  for (; i + 8 <= s.size(); i += 8) {
    uint64_t w;
    std::memcpy(&w, s.data() + i, 8);
    h = (h ^ w) * k_mul;
    h ^= h >> 29;
  }
  uint64_t w = 0;
  if (i < s.size()) std::memcpy(&w, s.data() + i, s.size() - i);
  return static_cast<uint8_t>(((h ^ w) * k_mul) >> 56);
}

// A byte key as compared: its prefix, then its bytes, read from its block
// only when needed (blk), or given (s).
struct bkey {
  uint64_t pfx = 0;
  const common::kv_block* blk = nullptr;
  std::string_view s;
  std::string_view view() const noexcept { return blk ? common::kv_key(blk) : s; }
};
struct bprobe : bkey {
  uint8_t fp = 0;
};

struct byte_keys {
  static constexpr bool k_blocks = true;
  // Limits of the layout (the registry entry's): the key and value lengths
  // recovery accepts in a block.
  static constexpr size_t k_max_key = 4096;
  static constexpr size_t k_max_value = common::k_max_value;
  // Inner-layer separators: copies in DRAM (true) or pointers to the fence
  // key blocks in the pool (false). See hybrid_tree.hpp for the measurement.
  static constexpr bool k_dram_separators = true;

  using key = bkey;
  using probe = bprobe;
  using probe_arg = const bprobe&;
  static inline const key k_min{};

  static probe make(std::string_view s) noexcept {
    probe p;
    p.pfx = key_prefix(s);
    p.s = s;
    p.fp = fingerprint(s);
    return p;
  }
  static uint8_t fp(const probe& p) noexcept { return p.fp; }
  static uint8_t fp_of(const key& k) noexcept { return fingerprint(k.view()); }
  static uint64_t key_word(const probe& p) noexcept { return p.pfx; }
  static key of(const pm::pool& p, uint64_t kw, uint64_t vw) noexcept { return {kw, common::kv_at(p, vw), {}}; }
  static key low(const pm::pool& p, uint64_t w) noexcept {
    if (!w) return k_min;
    auto* b = common::kv_at(p, w);
    return {key_prefix(common::kv_key(b)), b, {}};
  }
  static bool less(const key& a, const key& b) noexcept {
    return a.pfx != b.pfx ? a.pfx < b.pfx : a.view() < b.view();
  }
  static bool matches(const pm::pool& p, const entry* e, const probe& k) noexcept {
    return load_relaxed(&e->key) == k.pfx && common::kv_key(p, load_acq(&e->value)) == k.s;
  }
  // A fence key block holding k (flushed, not fenced: the split's fence
  // before it links the new leaf covers it). Throws error(pool_full).
  static uint64_t make_low(pm::pool& p, const key& k) { return common::make_kv_block(p, k.view(), {}); }
  static std::string describe(const key& k);
  static probe probe_of(const key& k) noexcept {
    probe p;
    p.pfx = k.pfx;
    p.s = k.view();
    return p;
  }

  // The DRAM inner layer: a separator is its prefix word and a pointer to a
  // kv_block-shaped copy of its bytes (0: the empty key).
  static constexpr bool k_refs = true;
  static uint64_t word(const key& k) noexcept { return k.pfx; }
  static uint64_t ref(const key& k) noexcept { return reinterpret_cast<uint64_t>(k.blk); }
  static key from_words(uint64_t w, uint64_t r) noexcept {
    return {w, reinterpret_cast<const common::kv_block*>(r), {}};
  }
  static bool le(uint64_t w, uint64_t r, const probe& k) noexcept {
    if (w != k.pfx) return w < k.pfx;
    return from_words(w, r).view() <= k.s;
  }
  static bool lt(uint64_t w, uint64_t r, const probe& k) noexcept {
    if (w != k.pfx) return w < k.pfx;
    return from_words(w, r).view() < k.s;
  }

  // Damaged pools (recovery, check()): a record's or fence's block.
  static bool valid_record(const pm::pool& p, uint64_t off) noexcept {
    return common::kv_block_valid(p, off, k_max_key, k_max_value);
  }
  static bool valid_low(const pm::pool& p, uint64_t w) noexcept {
    return !w || common::kv_block_valid(p, w, k_max_key, 0);
  }
};

// "<n bytes> 'printable\xNN...'" (at most 40 bytes shown), for messages.
inline std::string byte_keys::describe(const key& k) {
  std::string_view v = k.view();
  std::string s = std::to_string(v.size()) + "-byte key '";
  for (size_t i = 0; i < v.size() && i < 40; ++i) {
    unsigned char c = static_cast<unsigned char>(v[i]);
    if (c >= 32 && c < 127 && c != '\\') {
      s += static_cast<char>(c);
    } else {
      static const char* hex = "0123456789abcdef";
      s += "\\x";
      s += hex[c >> 4];
      s += hex[c & 15];
    }
  }
  return s + (v.size() > 40 ? "...'" : "'");
}

}  // namespace pmindex::btree::detail

// LB+-Tree leaf (persistent, 256 bytes = 4 cache lines) and its persistence
// protocol: the leaf policy of detail::hybrid_tree. See lbtree.hpp.
#pragma once

#include <bit>
#include <cstdint>
#include <memory>
#include <string>

#include "btree/detail/hybrid_tree.hpp"

namespace pmindex::btree::lbtree::detail {

using btree::detail::ins;

inline constexpr uint32_t k_slots = 14;
inline constexpr uint64_t k_bits = 0x3FFF;        // bitmap of the 14 slots
inline constexpr uint64_t k_alt = uint64_t{1} << 14;  // which next[] is live
// Slots per cache line (slot i sits at byte 16 + 16 i).
inline constexpr uint32_t k_line_mask[4] = {0x0007, 0x0078, 0x0780, 0x3800};

// clang-format off
struct entry {
  uint64_t key;        //  0
  uint64_t value;      //  8  an update is one 8-byte store of this word
};
struct leaf {
  uint64_t meta;       //   0  bits 0-13 bitmap, bit 14 alt, bit 15 zero, bytes 2-7 fp[0..5].
                       //      THE commit word: insert, remove, entry moves and splits
                       //      each end with one 8-byte store of it
  uint64_t fp_hi;      //   8  fp[6..13] (stored before meta in the same line)
  entry kv[k_slots];   //  16  slots 0-2 in line 0, 3-6 line 1, 7-10 line 2, 11-13 line 3
  uint64_t low;        // 240  lower fence key: written before the leaf is linked, then immutable
  uint32_t next[2];    // 248  right sibling offset / 64 (0: none); next[alt] is live,
                       //      next[!alt] is the spare a split writes before flipping alt
};
// clang-format on
static_assert(sizeof(leaf) == 256);

class leaf_ops {
 public:
  using leaf = detail::leaf;
  static constexpr const char* k_name = "lbtree";
  static constexpr uint64_t k_magic = 0x45455254424c4cddull;  // "\xddLLBTREE" (little-endian)

  leaf_ops(pm::pool& p, const index_config& cfg);

  uint64_t leaf_bytes() const noexcept { return sizeof(leaf); }
  uint32_t max_entries() const noexcept { return k_slots; }
  uint32_t inner_capacity() const noexcept { return inner_cap_; }
  uint64_t dram_bytes() const noexcept { return k_stripes * sizeof(sync::optimistic_lock); }

  void init(leaf* l, uint64_t low) const noexcept { l->low = low; }  // rest zeroed by the caller
  uint64_t low(const leaf* l) const noexcept { return l->low; }
  uint64_t next(const leaf* l) const noexcept {
    uint64_t m = btree::detail::load_acq(&l->meta);
    return uint64_t{btree::detail::load_acq(&l->next[(m >> 14) & 1])} * 64;
  }
  // Locks live in DRAM (a 256-byte leaf has no room): a striped table of
  // version locks indexed by a hash of the leaf offset. Two leaves sharing a
  // stripe only cost each other retries; a writer holds one stripe at a time.
  sync::optimistic_lock& lock(uint64_t off, leaf*) const noexcept {
    return locks_[((off >> 6) * 0x9E3779B97F4A7C15ull) >> (64 - k_stripe_bits)];
  }

  bool find(const leaf* l, uint64_t key, uint64_t& value) const noexcept {
    int i = slot_of(l, btree::detail::load_acq(&l->meta), key);
    if (i < 0) return false;
    value = btree::detail::load_rlx(&l->kv[i].value);
    return true;
  }
  size_t collect(const leaf* l, uint64_t from, record* out) const noexcept;

  ins insert(leaf* l, uint64_t key, uint64_t value);
  bool update(leaf* l, uint64_t key, uint64_t value);
  bool remove(leaf* l, uint64_t key);
  uint64_t split(leaf* l, uint64_t r_off, leaf* r, uint64_t key, uint64_t value);

  void recover(leaf*, const leaf*, bool) const noexcept {}  // every change commits with one store
  uint32_t count(const leaf* l) const noexcept { return std::popcount(l->meta & k_bits); }
  std::string check(const leaf* l, bool has_next, uint64_t next_low) const;

 private:
  static constexpr uint32_t k_stripe_bits = 14;
  static constexpr uint64_t k_stripes = uint64_t{1} << k_stripe_bits;
  int slot_of(const leaf* l, uint64_t meta, uint64_t key) const noexcept;

  pm::pool& p_;
  uint32_t inner_cap_;
  std::unique_ptr<sync::optimistic_lock[]> locks_;
};

}  // namespace pmindex::btree::lbtree::detail

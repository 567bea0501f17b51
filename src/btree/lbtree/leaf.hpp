// LB+-Tree leaf (persistent, 256 bytes = 4 cache lines) and its persistence
// protocol: the leaf policy of detail::hybrid_core, for either key kind (K =
// detail::u64_keys or byte_keys, see btree/detail/keys.hpp). See lbtree.hpp.
#pragma once

#include <bit>
#include <cstdint>
#include <cstring>
#include <memory>
#include <string>

#include "btree/detail/hybrid_core.hpp"

namespace pmindex::btree::lbtree::detail {

using btree::detail::entry;
using btree::detail::ins;

inline constexpr uint32_t k_slots = 14;
inline constexpr uint64_t k_bits = 0x3FFF;        // bitmap of the 14 slots
inline constexpr uint64_t k_alt = uint64_t{1} << 14;  // which next[] is live
// Slots per cache line (slot i sits at byte 16 + 16 i).
inline constexpr uint32_t k_line_mask[4] = {0x0007, 0x0078, 0x0780, 0x3800};

// clang-format off
// Slots are detail::entry {key, value} words (bytes: {prefix, record block}).
struct leaf {
  uint64_t meta;       //   0  bits 0-13 bitmap, bit 14 alt, bit 15 zero, bytes 2-7 fp[0..5].
                       //      THE commit word: insert, remove, entry moves and splits
                       //      each end with one 8-byte store of it
  uint64_t fp_hi;      //   8  fp[6..13] (stored before meta in the same line)
  entry kv[k_slots];   //  16  slots 0-2 in line 0, 3-6 line 1, 7-10 line 2, 11-13 line 3
  uint64_t low;        // 240  lower fence: the key (u64), or its key block's offset (bytes; 0: the
                       //      empty key). Written before the leaf is linked, then immutable
  uint32_t next[2];    // 248  right sibling offset / 64 (0: none); next[alt] is live,
                       //      next[!alt] is the spare a split writes before flipping alt.
                       //      Unlinking an empty successor: one 8-byte store of both
                       //      (the live one changed), the commit
};
// clang-format on
static_assert(sizeof(leaf) == 256);

template <class K>
class leaf_ops {
 public:
  using keys = K;
  using leaf = detail::leaf;
  using key = typename K::key;
  using probe_arg = typename K::probe_arg;
  static constexpr const char* k_name = "lbtree";
  // "\xddLLBTREE" / "\xdbLLBTREE" (little-endian): a pool of one layout is never read as the other.
  static constexpr uint64_t k_magic = K::k_blocks ? 0x45455254424c4cdbull : 0x45455254424c4cddull;

  leaf_ops(pm::pool& p, const index_config& cfg);

  uint64_t leaf_bytes() const noexcept { return sizeof(leaf); }
  uint32_t max_entries() const noexcept { return k_slots; }
  uint32_t inner_capacity() const noexcept { return inner_cap_; }
  uint64_t dram_bytes() const noexcept { return k_stripes * sizeof(sync::optimistic_lock); }

  void init(leaf* l, uint64_t low) const noexcept { l->low = low; }  // rest zeroed by the caller
  key low(const leaf* l) const noexcept { return K::low(p_, l->low); }
  uint64_t low_word(const leaf* l) const noexcept { return l->low; }
  uint64_t live(const leaf* l) const noexcept { return btree::detail::load_acq(&l->meta) & k_bits; }
  const entry* slot(const leaf* l, uint32_t i) const noexcept { return &l->kv[i]; }
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

  // The live link as one 8-byte store of the word holding both links
  // (unlinking an empty leaf, hybrid_core.hpp "Empty leaves"): failure-
  // atomic, and the spare is left as it was.
  void relink(leaf* l, uint64_t n) const noexcept {
    const uint32_t alt = (l->meta >> 14) & 1;
    uint32_t w[2] = {l->next[0], l->next[1]};
    w[alt] = static_cast<uint32_t>(n / 64);
    uint64_t x;
    std::memcpy(&x, w, 8);
    btree::detail::store_rel(reinterpret_cast<uint64_t*>(l->next), x);
  }
  const void* link_word(const leaf* l) const noexcept { return l->next; }

  bool find(const leaf* l, probe_arg key, uint64_t& value) const noexcept {
    int i = slot_of(l, btree::detail::load_acq(&l->meta), key);
    if (i < 0) return false;
    value = btree::detail::load_relaxed(&l->kv[i].value);
    return true;
  }
  ins insert(leaf* l, probe_arg key, uint64_t value);
  bool update(leaf* l, probe_arg key, uint64_t value, uint64_t& old);
  bool remove(leaf* l, probe_arg key, uint64_t& old);
  key split(leaf* l, uint64_t r_off, leaf* r, probe_arg key, uint64_t value);

  void recover(leaf*, const leaf*, bool) const noexcept {}  // every change commits with one store
  uint32_t count(const leaf* l) const noexcept { return std::popcount(l->meta & k_bits); }
  std::string check(const leaf* l, bool has_next, const key& next_low) const;

 private:
  static constexpr uint32_t k_stripe_bits = 14;
  static constexpr uint64_t k_stripes = uint64_t{1} << k_stripe_bits;
  key key_at(const leaf* l, uint32_t i) const noexcept { return K::of(p_, l->kv[i].key, l->kv[i].value); }
  int slot_of(const leaf* l, uint64_t meta, probe_arg key) const noexcept;

  pm::pool& p_;
  uint32_t inner_cap_;
  std::unique_ptr<sync::optimistic_lock[]> locks_;
};

extern template class leaf_ops<btree::detail::u64_keys>;
extern template class leaf_ops<btree::detail::byte_keys>;

}  // namespace pmindex::btree::lbtree::detail

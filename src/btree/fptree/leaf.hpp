// FPTree leaf (persistent) and its persistence protocol: the leaf policy of
// detail::hybrid_core, for either key kind (K = detail::u64_keys or
// byte_keys, see btree/detail/keys.hpp). See fptree.hpp for the index.
#pragma once

#include <algorithm>
#include <bit>
#include <cstdint>
#include <cstring>
#include <string>

#include "btree/detail/hybrid_core.hpp"

namespace pmindex::btree::fptree::detail {

using btree::detail::entry;
using btree::detail::ins;

// clang-format off
// C slots (C = params leaf, <= 64). Blocks of >= 64 bytes start on a line.
struct leaf {
  uint64_t bitmap;          //  0  bit i: slot i valid. The commit word of insert and remove
  uint64_t next;            //  8  right sibling (pool offset, 0: none); stored just before
                            //     the bitmap by a split (same line: see split())
  uint64_t low;             // 16  lower fence: the key (u64), or its key block's offset (bytes;
                            //     0: the empty key). Written before the leaf is linked, then immutable
  sync::optimistic_lock lock;  // 24  writers' lock / readers' version; volatile, reset at every open
  uint8_t fp[64];           // 32  one-byte fingerprints of slots 0..C-1 (only C bytes are the leaf's)
};
// Entries (detail::entry: {key, value} words; bytes: {prefix, record block})
// start at 32 + round_up(C, 16) and are 16 bytes, so none spans two cache
// lines. C = 64: 96 + 1024 = 1120 bytes (a 1280-byte block).
// clang-format on

template <class K>
class leaf_ops {
 public:
  using keys = K;
  using leaf = detail::leaf;
  using key = typename K::key;
  using probe_arg = typename K::probe_arg;
  static constexpr const char* k_name = "fptree";
  // "\xddFPTREE" / "\xdbFPTREE" (little-endian): a pool of one layout is never read as the other.
  static constexpr uint64_t k_magic = K::k_blocks ? 0x45455254505046dbull : 0x45455254505046ddull;

  leaf_ops(pm::pool& p, const index_config& cfg);

  uint64_t leaf_bytes() const noexcept { return ent_off_ + 16 * uint64_t{cap_}; }
  uint32_t max_entries() const noexcept { return cap_; }
  uint32_t inner_capacity() const noexcept { return inner_cap_; }
  uint64_t dram_bytes() const noexcept { return 0; }

  void init(leaf* l, uint64_t low) const noexcept {
    l->bitmap = 0;
    l->next = 0;
    l->low = low;
    l->lock.reset();
  }
  key low(const leaf* l) const noexcept { return K::low(p_, l->low); }
  uint64_t low_word(const leaf* l) const noexcept { return l->low; }
  uint64_t next(const leaf* l) const noexcept { return btree::detail::load_acq(&l->next); }
  uint64_t live(const leaf* l) const noexcept { return btree::detail::load_acq(&l->bitmap) & all_slots(); }
  const entry* slot(const leaf* l, uint32_t i) const noexcept { return ent(l, i); }
  sync::optimistic_lock& lock(uint64_t, leaf* l) const noexcept { return l->lock; }

  bool find(const leaf* l, probe_arg key, uint64_t& value) const noexcept {
    int i = slot_of(l, btree::detail::load_acq(&l->bitmap), key);
    if (i < 0) return false;
    value = btree::detail::load_relaxed(&ent(l, i)->value);
    return true;
  }
  ins insert(leaf* l, probe_arg key, uint64_t value);
  bool update(leaf* l, probe_arg key, uint64_t value, uint64_t& old);
  bool remove(leaf* l, probe_arg key, uint64_t& old);
  key split(leaf* l, uint64_t r_off, leaf* r, probe_arg key, uint64_t value);

  void recover(leaf* l, const leaf* next, bool dirty);
  uint32_t count(const leaf* l) const noexcept { return std::popcount(l->bitmap); }
  std::string check(const leaf* l, bool has_next, const key& next_low) const;

 private:
  entry* ent(leaf* l, uint32_t i) const noexcept {
    return reinterpret_cast<entry*>(reinterpret_cast<char*>(l) + ent_off_) + i;
  }
  const entry* ent(const leaf* l, uint32_t i) const noexcept {
    return reinterpret_cast<const entry*>(reinterpret_cast<const char*>(l) + ent_off_) + i;
  }
  key key_at(const leaf* l, uint32_t i) const noexcept { return K::of(p_, ent(l, i)->key, ent(l, i)->value); }
  uint64_t all_slots() const noexcept { return cap_ == 64 ? ~uint64_t{0} : (uint64_t{1} << cap_) - 1; }
  // The valid slot holding key, or -1: fingerprints first, keys of matches.
  int slot_of(const leaf* l, uint64_t bitmap, probe_arg key) const noexcept;

  pm::pool& p_;
  uint32_t cap_;
  uint32_t inner_cap_;
  uint32_t ent_off_;
};

extern template class leaf_ops<btree::detail::u64_keys>;
extern template class leaf_ops<btree::detail::byte_keys>;

}  // namespace pmindex::btree::fptree::detail

// FPTree leaf (persistent) and its persistence protocol: the leaf policy of
// detail::hybrid_tree. See fptree.hpp for the index as a whole.
#pragma once

#include <algorithm>
#include <bit>
#include <cstdint>
#include <cstring>
#include <string>

#include "btree/detail/hybrid_tree.hpp"

namespace pmindex::btree::fptree::detail {

using btree::detail::ins;

// clang-format off
// C slots (C = params leaf, <= 64). Blocks of >= 64 bytes start on a line.
struct leaf {
  uint64_t bitmap;          //  0  bit i: slot i valid. The commit word of insert and remove
  uint64_t next;            //  8  right sibling (pool offset, 0: none); stored just before
                            //     the bitmap by a split (same line: see split())
  uint64_t low;             // 16  lower fence key: written before the leaf is linked, then immutable
  sync::optimistic_lock lock;  // 24  writers' lock / readers' version; volatile, reset at every open
  uint8_t fp[64];           // 32  one-byte fingerprints of slots 0..C-1 (only C bytes are the leaf's)
};
struct entry {
  uint64_t key;             //  0
  uint64_t value;           //  8  an update is one 8-byte store of this word
};
// Entries start at 32 + round_up(C, 16) and are 16 bytes, so none spans two
// cache lines. C = 64: 96 + 1024 = 1120 bytes (a 1280-byte block).
// clang-format on

class leaf_ops {
 public:
  using leaf = detail::leaf;
  static constexpr const char* k_name = "fptree";
  static constexpr uint64_t k_magic = 0x45455254505046ddull;  // "\xddFPTREE" (little-endian)

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
  uint64_t low(const leaf* l) const noexcept { return l->low; }
  uint64_t next(const leaf* l) const noexcept { return btree::detail::load_acq(&l->next); }
  sync::optimistic_lock& lock(uint64_t, leaf* l) const noexcept { return l->lock; }

  bool find(const leaf* l, uint64_t key, uint64_t& value) const noexcept {
    int i = slot_of(l, btree::detail::load_acq(&l->bitmap), key);
    if (i < 0) return false;
    value = btree::detail::load_rlx(&ent(l, i)->value);
    return true;
  }
  size_t collect(const leaf* l, uint64_t from, record* out) const noexcept;

  ins insert(leaf* l, uint64_t key, uint64_t value);
  bool update(leaf* l, uint64_t key, uint64_t value);
  bool remove(leaf* l, uint64_t key);
  uint64_t split(leaf* l, uint64_t r_off, leaf* r, uint64_t key, uint64_t value);

  void recover(leaf* l, const leaf* next, bool dirty);
  uint32_t count(const leaf* l) const noexcept { return std::popcount(l->bitmap); }
  std::string check(const leaf* l, bool has_next, uint64_t next_low) const;

 private:
  entry* ent(leaf* l, uint32_t i) const noexcept {
    return reinterpret_cast<entry*>(reinterpret_cast<char*>(l) + ent_off_) + i;
  }
  const entry* ent(const leaf* l, uint32_t i) const noexcept {
    return reinterpret_cast<const entry*>(reinterpret_cast<const char*>(l) + ent_off_) + i;
  }
  uint64_t all_slots() const noexcept { return cap_ == 64 ? ~uint64_t{0} : (uint64_t{1} << cap_) - 1; }
  // The valid slot holding key, or -1: fingerprints first, keys of matches.
  int slot_of(const leaf* l, uint64_t bitmap, uint64_t key) const noexcept;

  pm::pool& p_;
  uint32_t cap_;
  uint32_t inner_cap_;
  uint32_t ent_off_;
};

}  // namespace pmindex::btree::fptree::detail

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
                            //     the bitmap by a split (same line: see split()); alone,
                            //     the commit of unlinking an empty successor
  uint64_t low;             // 16  lower fence: the key (u64), or its key block's offset (bytes;
                            //     0: the empty key). Written before the leaf is linked, then immutable
  sync::optimistic_lock lock;  // 24  writers' lock / readers' version; volatile, reset at every open
  uint8_t fp[64];           // 32  one-byte fingerprints of slots 0..C-1 (only C bytes are the leaf's)
};
// Entries (detail::entry: {key, value} words; bytes: {prefix, record block})
// start at 32 + round_up(C, 16) and are 16 bytes, so none spans two cache
// lines. Then the SCAN ORDER HINT: round_up(C, 8) bytes, slot numbers in key
// order (hybrid_core.hpp, "Scan order hint"). C = 64: 96 + 1024 + 64 = 1184
// bytes (a 1280-byte block, as the 1120 bytes before the hint were).
// clang-format on

template <class K>
class leaf_ops {
 public:
  using keys = K;
  using leaf = detail::leaf;
  using key = typename K::key;
  using probe_arg = typename K::probe_arg;
  static constexpr const char* k_name = "fptree";
  // "\xdeFPTREE" / "\xdcFPTREE" (little-endian): a pool of one layout is never read as the other.
  static constexpr uint64_t k_magic = K::k_blocks ? 0x45455254505046dcull : 0x45455254505046deull;
  // The leaf layout before the scan order hint (leaves 64 bytes shorter):
  // refused with errc::bad_version.
  static constexpr uint64_t k_magic_v1 = K::k_blocks ? 0x45455254505046dbull : 0x45455254505046ddull;
  static constexpr const char* k_layout_v1 = "the leaf layout before scan order hints";

  leaf_ops(pm::pool& p, const index_config& cfg);

  uint64_t leaf_bytes() const noexcept { return order_off_ + (cap_ + 7) / 8 * 8; }
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
  // The link word (unlinking an empty leaf, hybrid_core.hpp "Empty leaves").
  void relink(leaf* l, uint64_t n) const noexcept { btree::detail::store_rel(&l->next, n); }
  const void* link_word(const leaf* l) const noexcept { return &l->next; }

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

  // The scan order hint: a hint only, read and written with relaxed
  // 8-byte accesses by scans (concurrent scans may store it at once), never
  // by writers, never flushed; a scan trusts it only after checking it
  // against the leaf (hybrid_core.hpp).
  static constexpr bool k_order_hint = true;
  void load_order(const leaf* l, uint8_t* ord) const noexcept {
    const auto* w = reinterpret_cast<const uint64_t*>(reinterpret_cast<const char*>(l) + order_off_);
    for (uint32_t i = 0; i < (cap_ + 7) / 8; ++i) {
      const uint64_t x = btree::detail::load_relaxed(w + i);
      std::memcpy(ord + 8 * i, &x, 8);
    }
  }
  void store_order(leaf* l, const uint8_t* ord) const noexcept {
    auto* w = reinterpret_cast<uint64_t*>(reinterpret_cast<char*>(l) + order_off_);
    for (uint32_t i = 0; i < (cap_ + 7) / 8; ++i) {
      uint64_t x;
      std::memcpy(&x, ord + 8 * i, 8);
      btree::detail::store_relaxed(w + i, x);
    }
  }

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
  uint32_t order_off_;  // the scan order hint: right after the entries, 8-byte aligned
};

extern template class leaf_ops<btree::detail::u64_keys>;
extern template class leaf_ops<btree::detail::byte_keys>;

}  // namespace pmindex::btree::fptree::detail

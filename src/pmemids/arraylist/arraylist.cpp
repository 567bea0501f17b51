// pmemids `arraylist`: operations (see arraylist.hpp for the layout and the
// costs).
#include "pmemids/arraylist/arraylist.hpp"

#include <cstring>

#include "common/atomics.hpp"
#include "common/root_block.hpp"
#include "pmindex/pm/tx.hpp"

namespace pmindex::pmemids::arraylist {

array::array(pm::pool& p, open_kind k, const index_config& c)
    : p_(p), cap_(c.u64("capacity")), u64_(c.keys() == key_kind::u64), mut_(c) {
  const uint64_t bytes = cap_ * k_item;
  if (k == open_kind::created) {
    // The arrays first: a crash before the root word leaves no index (and
    // tracing frees them).
    const uint64_t a = p.alloc(bytes), b = u64_ || !a ? 0 : p.alloc(bytes);
    if (!a || (!u64_ && !b))
      throw error(errc::pool_full, "arraylist: the pool has no room for " + std::to_string(u64_ ? 1 : 2) +
                                       " array(s) of " + std::to_string(cap_) + " items of " + std::to_string(k_item) +
                                       " bytes (--pool-size, or a smaller --params capacity=N)");
    items_ = p.ptr<char>(a);
    bool stored = false;
    for (uint64_t s = 0; s < cap_; ++s)
      if (meta(s)) meta(s) = 0, p.flush(&meta(s), 8), stored = true;
    if (stored) p.fence();
    root_ = common::create_root<root_block>(p, k_root_magic, [&](root_block& r) {
      r.array = a;
      r.spare = b;
      r.capacity = cap_;
      r.kind = u64_ ? 0 : 1;
    });
    spare_ = b ? p.ptr<char>(b) : nullptr;
    return;
  }
  root_ = common::attach_root<root_block>(p, k_root_magic, "arraylist");
  if (root_->capacity != cap_ || root_->kind != (u64_ ? 0u : 1u))
    throw error(errc::corrupt, "arraylist: the root block does not match the pool's parameters");
  if (!p.valid_block(root_->array, bytes) || (u64_ ? root_->spare != 0 : !p.valid_block(root_->spare, bytes)))
    throw error(errc::corrupt, "arraylist: the root block names no array of " + std::to_string(cap_) + " items");
  items_ = p.ptr<char>(root_->array);
  spare_ = u64_ ? nullptr : p.ptr<char>(root_->spare);
  for (uint64_t s = 0; s < cap_; ++s)
    if (meta_live(meta(s))) ++records_, end_ = s + 1;
}

uint64_t array::slot(const key& k) const {
  if (k.len != 8 || k.w1)
    throw error(errc::unsupported, "arraylist: keys are the 8 bytes of a slot number, got " +
                                       std::to_string(k.len) + " bytes");
  if (k.w >= cap_)
    throw error(errc::key_too_long, "arraylist: key " + std::to_string(k.w) + " is past the array (capacity " +
                                        std::to_string(cap_) + ", --params capacity=N at creation)");
  return k.w;
}

const char* array::find(key k, uint32_t* n) const {
  const uint64_t s = slot(k), m = meta(s);
  if (!meta_live(m)) return nullptr;
  *n = meta_vlen(m);
  return value_of(item(s), m);
}

void array::write_item(uint64_t s, const char* v, uint32_t n, uint64_t m) {
  char* it = item(s);
  if (n) std::memcpy(it + 8, v, n);
  if (8 + n > 64) {  // the value reaches line 1: durable before the meta word
    p_.flush(it + 64, 8 + n - 64);
    if (!tx()) p_.fence();  // tx: the commit's fence orders it
  }
  if (tx()) {
    meta(s) = m;  // logged; the commit flushes its line
    return;
  }
  common::store_rel(&meta(s), m);
  if (mut_.on(mutant::insert_unflushed)) return;
  p_.persist(it, 8 + n < 64 ? 8 + n : 64);
}

bool array::insert(key k, const char* v, uint32_t n) {
  const uint64_t s = slot(k);
  if (meta_live(meta(s))) return false;
  if (tx()) {
    pm::transaction tx(p_);
    tx.snapshot(&meta(s), 8);
    write_item(s, v, n, make_meta(8, n));
    tx.commit();
  } else {
    write_item(s, v, n, make_meta(8, n));
  }
  ++records_;
  if (s >= end_) end_ = s + 1;
  return true;
}

bool array::update(key k, const char* v, uint32_t n) {
  const uint64_t s = slot(k), m = meta(s);
  if (!meta_live(m)) return false;
  if (update_in_place(p_, &meta(s), 8, v, n, u64_)) return true;  // keys=u64; tx
  // persist, keys=bytes: the value goes to the copy not in use. The spare
  // is in use: into the item, meta word last (as an insert). The item is:
  // into the spare, persisted, then the meta word swings to it.
  if ((m & k_spare_bit) || mut_.on(mutant::update_in_place)) {
    write_item(s, v, n, make_meta(8, n));
    return true;
  }
  char* sp = spare_ + s * k_item;
  if (n) std::memcpy(sp + 8, v, n);
  p_.persist(sp + 8, n);
  common::store_rel(&meta(s), make_meta(8, n) | k_spare_bit);
  p_.persist(&meta(s), 8);
  return true;
}

bool array::remove(key k) {
  const uint64_t s = slot(k);
  if (!meta_live(meta(s))) return false;
  if (tx()) {
    pm::transaction tx(p_);
    if (mut_.on(mutant::tx_unlogged_remove)) meta(s) = 0;
    else tx.set(&meta(s), 0);
    tx.commit();
  } else {
    p_.store_persist(&meta(s), uint64_t{0});
  }
  --records_;
  return true;
}

// --- check, trace, stats

std::string array::bad_meta(uint64_t m) const {
  if (!m) return "";
  const uint64_t known = k_live | k_spare_bit | uint64_t{0xff} << 32 | 0xffffffffu;
  if (!meta_live(m) || (m & ~known) || meta_klen(m) != 8 || meta_vlen(m) > max_value() ||
      (u64_ && (meta_vlen(m) != 8 || (m & k_spare_bit))))
    return "an item with meta word " + std::to_string(m);
  return "";
}

check_result array::check() {
  uint64_t live = 0;
  for (uint64_t s = 0; s < cap_; ++s) {
    const uint64_t m = meta(s);
    if (auto why = bad_meta(m); !why.empty())
      return check_result::fail("arraylist: slot " + std::to_string(s) + ": " + why);
    live += meta_live(m);
  }
  if (live != records_)
    return check_result::fail("arraylist: " + std::to_string(live) + " live items, the count says " +
                              std::to_string(records_));
  return {};
}

void array::trace(pm::pool::trace_sink& s) {
  s.add(p_.root(), sizeof(root_block));
  s.add(root_->array, cap_ * k_item);
  if (root_->spare) s.add(root_->spare, cap_ * k_item);
}

index_stats array::stats() {
  index_stats st;
  st.records = records_;
  auto u = p_.usage();
  st.pm_bytes_used = u.used_bytes;
  st.pm_bytes_reserved = u.reserved_bytes;
  st.dram_bytes = u.dram_bytes;
  st.alloc_dram_bytes = u.dram_bytes;
  st.extra = {{"capacity", double(cap_)}, {"item_bytes", double(k_item)}};
  return st;
}

}  // namespace pmindex::pmemids::arraylist

// The record block of the pmemids structures that keep one record per
// block (hashtable, linkedlist): link words, then the key word(s), the meta
// word and the value slot of front.hpp.
//
//     0        link words      `links` bytes (the structure's next pointers)
//     links    key word(s)     kw = 8 (keys=u64) or 16 (keys=bytes)
//     links+kw meta word       front.hpp (always live: removes unlink)
//     +8       value slot      8 bytes, or the `value` parameter rounded to 8
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <string>

#include "pmemids/detail/front.hpp"
#include "pmindex/pm/pool.hpp"
#include "pmindex/pm/tx.hpp"

namespace pmindex::pmemids {

struct element_layout {
  uint32_t links = 8, kw = 8, slot = 8, max_value = 8;
  bool u64 = true;

  element_layout(uint32_t link_bytes, const index_config& c)
      : links(link_bytes),
        kw(c.keys() == key_kind::u64 ? 8 : 16),
        slot(value_slot(c)),
        max_value(c.keys() == key_kind::u64 ? 8 : static_cast<uint32_t>(c.u64("value"))),
        u64(c.keys() == key_kind::u64) {}
  uint32_t bytes() const { return links + kw + 8 + slot; }
  uint32_t used(uint32_t vlen) const { return links + kw + 8 + vlen; }  // bytes to persist

  key key_at(const char* e) const {
    auto* w = reinterpret_cast<const uint64_t*>(e + links);
    return {w[0], kw == 16 ? w[1] : 0, meta_klen(w[kw / 8])};
  }
  uint64_t* meta(char* e) const { return reinterpret_cast<uint64_t*>(e + links + kw); }
  char* value(char* e) const { return e + links + kw + 8; }
  void fill(char* e, key k, const char* v, uint32_t n) const {
    auto* w = reinterpret_cast<uint64_t*>(e + links);
    w[0] = k.w;
    if (kw == 16) w[1] = k.w1;
    *meta(e) = make_meta(k.len, n);
    if (n) std::memcpy(value(e), v, n);
  }
  // keys=u64: the value is one word, so one 8-byte store is failure-atomic
  // in every mode (F 1, 1 fence).
  void store_u64_value(pm::pool& p, char* e, const char* v) const {
    uint64_t w;
    std::memcpy(&w, v, 8);
    p.store_persist(reinterpret_cast<uint64_t*>(value(e)), w);
  }
  // tx mode, keys=bytes: meta and value rewritten in place under the log.
  void update_in_tx(pm::pool& p, char* e, key k, const char* v, uint32_t n) const {
    pm::transaction tx(p);
    tx.snapshot(meta(e), 8 + std::max(n, meta_vlen(*meta(e))));
    if (n) std::memcpy(value(e), v, n);
    *meta(e) = make_meta(k.len, n);
    tx.commit();
  }
  // "" if the element holds a well-formed record, else what is wrong.
  std::string bad_record(char* e) const {
    key k = key_at(e);
    uint64_t m = *meta(e);
    if (!meta_live(m) || k.len > k_max_key || (u64 && k.len != 8) || meta_vlen(m) > max_value ||
        (u64 && meta_vlen(m) != 8))
      return "element with key length " + std::to_string(k.len) + ", meta " + std::to_string(m);
    if (!u64 && !key_canonical(k)) return "key with bytes past its length";
    return "";
  }
};

}  // namespace pmindex::pmemids

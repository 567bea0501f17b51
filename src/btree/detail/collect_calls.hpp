// The calls PACTree and uTree make the same way over their own word
// operations, for either key policy K (btree/detail/keys.hpp):
//
//   keys=u64    the byte insert/update/remove are checked into the u64
//               calls; byte scans start at the smallest 8-byte key >= the
//               bound; the byte range is index::range (scans of 256).
//   keys=bytes  a record is a kv block (common/kv_block.hpp) whose offset is
//               the slot's word; the u64 scan and range are bytes_index's.
//
// Every scan and range is one collect() walk. Tree (which befriends this)
// provides: p_, insert_word(probe, kv), update_word(probe, kv, old&),
// remove_word(probe, old&) (each stores the word with its own protocol and
// fences before the store), collect(from, count, out, hi), and the u64
// calls. lookup stays the tree's own (their reads differ).
#pragma once

#include <algorithm>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "btree/detail/keys.hpp"
#include "common/kv_block.hpp"
#include "pmindex/index.hpp"

namespace pmindex::btree::detail {

template <class Tree, class K>
class collect_calls : public bytes_index {
 public:
  using bytes_index::insert, bytes_index::update, bytes_index::upsert, bytes_index::remove, bytes_index::lookup,
      bytes_index::scan, bytes_index::range;

  bool insert(std::string_view k, std::string_view v) override { return put(k, v, false); }
  bool update(std::string_view k, std::string_view v) override { return put(k, v, true); }

  bool remove(std::string_view k) override {
    check_key(k);
    if constexpr (!K::k_blocks) {
      return self().remove(key_u64(k));
    } else {
      return common::unlink_kv_block(self().p_, [&](uint64_t& old) { return self().remove_word(K::make(k), old); });
    }
  }

  size_t scan(uint64_t from, size_t count, record* out) override {
    if constexpr (K::k_blocks) {
      return bytes_index::scan(from, count, out);
    } else {
      if (!count) return 0;
      thread_local std::vector<entry> got;
      auto g = self().p_.pin();
      self().collect(from, count, got);
      for (size_t i = 0; i < got.size(); ++i) out[i] = {got[i].key, got[i].value};
      return got.size();
    }
  }

  // `from` is a bound of any length, not a key.
  size_t scan(std::string_view from, size_t count, record_buffer& out) override {
    if (!count) return 0;
    thread_local std::vector<entry> got;
    auto g = self().p_.pin();
    if constexpr (K::k_blocks) {
      const std::string lower(from);
      self().collect(K::make(lower), count, got);
      push_blocks(got, out);
    } else {
      uint64_t k;
      if (!u64_at_or_after(from, k)) return 0;
      self().collect(k, count, got);
      for (const entry& e : got) out.push_back(key_bytes(e.key), value_bytes(e.value));
    }
    return got.size();
  }

  size_t range(uint64_t lo, uint64_t hi, std::vector<record>& out) override {
    if constexpr (K::k_blocks) {
      return bytes_index::range(lo, hi, out);
    } else {
      if (hi < lo) return 0;
      thread_local std::vector<entry> got;
      auto g = self().p_.pin();
      self().collect(lo, SIZE_MAX, got, &hi);
      for (const entry& e : got) out.push_back({e.key, e.value});
      return got.size();
    }
  }

  size_t range(std::string_view lo, std::string_view hi, record_buffer& out) override {
    if constexpr (!K::k_blocks) {
      return index::range(lo, hi, out);  // scans of 256 (8-byte bounds from any strings)
    } else {
      if (hi < lo) return 0;
      thread_local std::vector<entry> got;
      auto g = self().p_.pin();
      const std::string l(lo), h(hi);
      const typename K::key hk = K::make(h);
      self().collect(K::make(l), SIZE_MAX, got, &hk);
      push_blocks(got, out);
      return got.size();
    }
  }

 protected:
  using bytes_index::bytes_index;

 private:
  Tree& self() { return static_cast<Tree&>(*this); }

  // keys=bytes: a new block, then the word that names it (an update fences
  // first: the block durable before the swing). A block never published is
  // freed at once; a replaced one is retired.
  bool put(std::string_view k, std::string_view v, bool update) {
    check_key(k);
    check_value(v);
    if constexpr (!K::k_blocks) {
      return update ? self().update(key_u64(k), value_u64(v)) : self().insert(key_u64(k), value_u64(v));
    } else {
      return common::publish_kv_block(self().p_, k, v, [&](uint64_t kv, uint64_t& old) {
        if (!update) return self().insert_word(K::make(k), kv);
        self().p_.fence();
        return self().update_word(K::make(k), kv, old);
      });
    }
  }

  // The records of collected words (blocks immutable, the caller pinned).
  // Each record's block is a miss of its own: they are asked for k_ahead
  // records before they are read, so that the misses overlap (read one
  // after another, a byte scan100 waited for ~100 misses in a row).
  void push_blocks(const std::vector<entry>& got, record_buffer& out) {
    constexpr size_t k_ahead = 16;
    const auto& p = self().p_;
    const size_t n = got.size();
    for (size_t i = 0; i < std::min(k_ahead, n); ++i) __builtin_prefetch(common::kv_at(p, got[i].value));
    for (size_t i = 0; i < n; ++i) {
      if (i + k_ahead < n) __builtin_prefetch(common::kv_at(p, got[i + k_ahead].value));
      const common::kv_block* b = common::kv_at(p, got[i].value);
      out.push_back(common::kv_key(b), common::kv_value(b));
    }
  }
};

}  // namespace pmindex::btree::detail

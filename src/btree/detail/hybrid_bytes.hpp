// keys=bytes: the hybrid B+-tree (detail/hybrid_core.hpp) with byte-string
// keys and values, as Part Two (VLDB'22) ran FPTree and LB+-Tree with
// variable-length keys: a record lives in one kv block in the pool
// (common/kv_block.hpp: key bytes, then value bytes), and its leaf slot holds
// {prefix of the key, block offset} beside a one-byte fingerprint of the whole
// key. A search compares fingerprints, then the prefix word of each match,
// and reads a key's bytes only when both agree. Leaf fences are key blocks
// (one per leaf but the head, made by the split that links it); the DRAM
// inner layer holds copies of them (detail/inner_layer.hpp).
//
// Record protocol (detail/keys.hpp for the slot words):
//   insert  make_kv_block (written + flushed, before the leaf is locked; a
//           full pool fails here, nothing changed), then the leaf's insert:
//           its fence before the commit store orders the block first. A key
//           already present: the block, never published, is freed at once.
//   update  a new block, flushed and fenced, then one 8-byte store of the
//           slot's value word, persisted before the unlock; the old block is
//           retired (epochs) once that store is durable.
//   remove  the leaf's remove (bitmap/meta store persisted), then the block
//           is retired; a leaf emptied by it is unlinked, and it and its
//           fence key block retired (hybrid_core.hpp, "Empty leaves").
// Every call pins the pool's epoch, so a block an optimistic reader can
// still see is never reused under it: readers compare keys in blocks that
// stay mapped and unchanged (blocks are immutable), and copy values out
// after their leaf snapshot validated.
//
// Recovery: every leaf's fence block and, on a dirty open, every valid
// slot's block are checked (inside the heap, lengths within the limits:
// errc::corrupt otherwise) before they are read; trace() reports the anchor,
// the leaves, the fence blocks and the record blocks; a block allocated but
// never published is unreachable and reclaimed by the pool.
//
// Cost per operation in persist mode (B = lines of the record block,
// ceil((8 + key + value) / 64), one more when it straddles): see fptree.hpp
// and lbtree.hpp.
#pragma once

#include <algorithm>
#include <string>
#include <string_view>

#include "btree/detail/hybrid_core.hpp"
#include "common/mutant.hpp"

namespace pmindex::btree::detail {

template <class Ops>
class hybrid_bytes final : public hybrid_index<bytes_index, Ops> {
  using K = byte_keys;
  using leaf = typename Ops::leaf;
  static_assert(std::is_same_v<typename Ops::keys, byte_keys>);

 public:
  hybrid_bytes(pm::pool& p, open_kind kind, const index_config& cfg)
      : hybrid_index<bytes_index, Ops>(p, kind, cfg), p_(p), mut_(cfg) {}

  bool insert(std::string_view key, std::string_view value) override {
    this->check_key(key);
    this->check_value(value);
    uint64_t kv = 0;
    if (!make_record(key, value, kv, true)) return false;
    ins r;
    for (bool again = false;; again = true) {
      // A split that finds the pool full (no leaf, no fence key block): the
      // block was never published. The blocks retired by removes come back
      // (reclaim(), unpinned) and the insert is tried once more.
      try {
        auto g = p_.pin();
        r = core_.insert(K::make(key), kv);
        break;
      } catch (const error& e) {
        if (e.code() != errc::pool_full || again) {
          p_.free(kv);
          throw;
        }
      } catch (...) {
        p_.free(kv);
        throw;
      }
      core_.reclaim();
    }
    if (r != ins::done) p_.free(kv);
    return r == ins::done;
  }

  bool update(std::string_view key, std::string_view value) override {
    this->check_key(key);
    this->check_value(value);
    uint64_t kv = 0;
    if (!make_record(key, value, kv, false)) return false;
    auto g = p_.pin();
    p_.fence();  // the new block durable before the slot names it
    uint64_t old = 0;
    if (!core_.update(K::make(key), kv, old)) {
      p_.free(kv);
      return false;
    }
    p_.retire(old);  // the swing is durable: no recovery can reach old
    return true;
  }

  bool remove(std::string_view key) override {
    this->check_key(key);
    auto g = p_.pin();
    uint64_t old = 0;
    if (!core_.remove(K::make(key), old)) return false;
    p_.retire(old);
    return true;
  }

  bool lookup(std::string_view key, std::string* value) override {
    this->check_key(key);
    auto g = p_.pin();
    const byte_keys::probe k = K::make(key);
    uint64_t kv = 0;
    bool found = false;
    core_.read_leaf(k, [&](leaf* l) { found = core_.ops().find(l, k, kv); });
    if (found && value) value->assign(common::kv_value(p_, kv));
    return found;
  }

  // `from` is a bound, not a key: any length (index::range() continues
  // after the longest key with a longer one).
  size_t scan(std::string_view from, size_t count, record_buffer& out) override {
    if (!count) return 0;
    auto g = p_.pin();
    std::string lower(from);
    byte_keys::probe k = K::make(lower);
    entry buf[64];  // >= Ops::max_entries()
    size_t got = 0;
    core_.scan_leaves(k, count, buf, [&](entry* b, size_t m) {
      for (size_t i = 0; i < m && got < count; ++i, ++got) {
        auto* blk = common::kv_at(p_, b[i].value);
        out.push_back(common::kv_key(blk), common::kv_value(blk));
      }
      if (got == count) return false;
      if (m) {  // later leaves: keys after the last one returned
        lower.assign(common::kv_key(p_, b[m - 1].value));
        lower.push_back('\0');
        k = K::make(lower);
      }
      return true;
    }, []() -> entry* { return nullptr; });
    return got;
  }


 private:
  using hybrid_index<bytes_index, Ops>::core_;

  // The record block of an insert (present: whether the key must be absent)
  // or an update, written and flushed. A full pool first gets back retired
  // blocks whose grace period ended (reclaim(), unpinned); if it is still
  // full, an insert of a present key or an update of an absent one returns
  // false (out = 0) as it would with room, and anything else throws
  // error(pool_full) with nothing changed.
  bool make_record(std::string_view key, std::string_view value, uint64_t& out, bool present) {
    for (int attempt = 0;; ++attempt) {
      try {
        out = write_record(key, value);
        return true;
      } catch (const error& e) {
        if (e.code() != errc::pool_full) throw;
        if (attempt == 0) {
          core_.reclaim();
          continue;
        }
        if (this->lookup(key, nullptr) == present) return false;
        throw;
      }
    }
  }

  uint64_t write_record(std::string_view key, std::string_view value) {
    if (mut_.on(hybrid_mutant::kv_block_unflushed)) [[unlikely]] {  // published before it is durable
      uint64_t off = p_.alloc_or_throw(common::kv_block_bytes(key.size(), value.size()));
      auto* b = p_.ptr<common::kv_block>(off);
      b->klen = static_cast<uint32_t>(key.size());
      b->vlen = static_cast<uint32_t>(value.size());
      if (!key.empty()) std::memcpy(b->data, key.data(), key.size());
      if (!value.empty()) std::memcpy(b->data + key.size(), value.data(), value.size());
      return off;
    }
    return common::make_kv_block(p_, key, value);
  }

  pm::pool& p_;
  common::mutant_switch<hybrid_mutant> mut_;
};

}  // namespace pmindex::btree::detail

// PermART keys=bytes: open, recovery, tracing, invariant check, stats.
#include <string>

#include "art/permart/bytes_tree.hpp"

namespace pmindex::art::permart::detail {

bytes_tree::bytes_tree(pm::pool& p, open_kind k, const index_config& cfg, bool log)
    : bytes_index(p), core(p, cfg, log), rd_(p) {
  open_root(k, k_bytes_root_magic, "permart");
  if (k == open_kind::dirty) recover_slot(&root_->slot, -1);
  finish_open(k);
}

// A pair read from a pool after a crash: lengths within the limits, its
// blocks inside the heap and of the lengths the pair says.
void bytes_tree::recover_pair(const bpair& kv) {
  if (kv.klen > k_max_key || kv.vlen > k_max_value) throw error(errc::corrupt, "permart: pair length out of range");
  uint64_t kb = pair_reader::key_block(kv), vb = pair_reader::value_block(kv);
  if (kb && (!common::kv_block_valid(p_, kb, k_max_key, 0) || common::kv_at(p_, kb)->klen != kv.klen))
    throw error(errc::corrupt, "permart: damaged key block");
  if (vb && (!common::kv_block_valid(p_, vb, 0, k_max_value) || common::kv_at(p_, vb)->vlen != kv.vlen))
    throw error(errc::corrupt, "permart: damaged value block");
}

// After a crash (as tree::recover_slot), checking every offset and length
// before it is followed.
void bytes_tree::recover_slot(uint64_t* slot, int64_t parent_depth) {
  header* h = recover_node(slot);
  if (!h) return;
  const uint64_t off = untag(*slot);
  switch (static_cast<kind>(h->kind)) {
    case kind::leaf: {
      if ((h->cap != k_bsmall_leaf && h->cap != k_bbig_leaf) || h->count == 0 || h->count > h->cap ||
          (leaf_logged(h) && h->cap != k_bbig_leaf) || !p_.valid_block(off, bleaf_block_size(h)))
        throw error(errc::corrupt, "permart: damaged leaf");
      if (leaf_logged(h)) recover_log(reinterpret_cast<blog_leaf*>(h)->log);
      const bpair* kv = bleaf_pairs(h);
      for (unsigned i = 0; i < h->count; ++i) recover_pair(kv[i]);
      if (leaf_logged(h))
        for (auto& e : reinterpret_cast<blog_leaf*>(h)->log)
          if (e.meta & k_log_valid) recover_pair(e.kv);
      return;
    }
    case kind::sparse:
    case kind::indirect:
    case kind::full: {
      uint64_t d = bdepth(h);
      if (int64_t(d) <= parent_depth || d > k_max_key || !p_.valid_block(off, binner_size(h->kind, d)) ||
          (h->kind == uint8_t(kind::sparse) && h->count > k_sparse_cap))
        throw error(errc::corrupt, "permart: damaged inner node");
      each_slot(h, [&](int, uint64_t* s) {
        recover_slot(s, int64_t(d));
        return true;
      });
      return;
    }
    default: throw error(errc::corrupt, "permart: unknown node kind");
  }
}

void bytes_tree::trace(pm::pool::trace_sink& sink) {
  trace_root(sink);
  auto walk = [&](auto&& self, uint64_t v) -> void {
    if (!v) return;
    if (is_link(v)) {
      sink.add(untag(v), k_link_size);
      return;
    }
    header* h = hdr(v);
    sink.add(untag(v), block_size(h));
    if (h->kind == uint8_t(kind::leaf)) {
      each_block(h, [&](uint64_t b) { sink.add(b, common::kv_block_size(p_, b)); });
      return;
    }
    each_slot(h, [&](int, uint64_t* s) {
      self(self, load_acq(s) & ~k_unpersisted);
      return true;
    });
  };
  walk(walk, load_acq(&root_->slot) & ~k_unpersisted);
}

// Leaf invariants: count and capacity, log entries well formed, the view
// sorted and non-empty, every key on the leaf's path (an end slot's leaf
// holds exactly the path), keys ascending across the tree, blocks allocated.
std::string bytes_tree::check_leaf(header* h, std::string_view path, bool end_slot, uint64_t& records,
                                   std::string& prev_key, bool& any) {
  if ((h->cap != k_bsmall_leaf && h->cap != k_bbig_leaf) || h->count == 0 || h->count > h->cap ||
      bleaf_cap_for(h->count) != h->cap || (leaf_logged(h) && (!log_ || h->cap != k_bbig_leaf)))
    return "bad leaf count/capacity";
  if (leaf_logged(h)) {
    auto* l = reinterpret_cast<blog_leaf*>(h);
    for (unsigned j = 0; j < 2; ++j) {
      uint64_t m = l->log[j].meta;
      if (m & ~(k_log_valid | k_log_delete)) return "log entry with UNPERSISTED or unknown bits";
      if (m && !(m & k_log_valid)) return "log entry with bits but not VALID";
      if (j == 1 && m && !l->log[0].meta) return "log entry 1 used before entry 0";
      if (m && l->log[j].stamp == sync::k_stamp_tbd) return "unsettled log entry";
    }
  }
  const bpair* base = bleaf_pairs(h);
  for (unsigned i = 1; i < h->count; ++i)
    if (rd_.key(base[i - 1]) >= rd_.key(base[i])) return "leaf base not sorted";
  std::string err;
  each_block(h, [&](uint64_t b) {
    if (err.empty() && !p_.is_allocated(b)) err = "pair names a free block " + std::to_string(b);
  });
  if (!err.empty()) return err;
  bpair view[k_bmax_view];
  unsigned n = leaf_view(h, view, 0, true);
  if (n == 0 || n > k_bbig_leaf || (end_slot && n != 1)) return "leaf view empty or over capacity";
  for (unsigned i = 0; i < n; ++i) {
    std::string_view k = rd_.key(view[i]);
    if (k.substr(0, path.size()) != path || (end_slot && k.size() != path.size())) return "leaf key off its path";
    if (any && k <= prev_key) return "keys out of order";
    prev_key.assign(k);
    any = true;
    ++records;
  }
  return {};
}

// As tree::check_slot; `path` is the key bytes every key below must start
// with (the parent's prefix and the slot's byte).
std::string bytes_tree::check_slot(uint64_t* slot, int64_t parent_depth, std::string& path, uint64_t& records,
                                   std::string& prev_key, bool& any) {
  uint64_t v = load_acq(slot);
  if (v & k_unpersisted) return "slot with UNPERSISTED bit";
  if (!v) return {};
  if (!p_.is_allocated(untag(v))) return "slot points to a free block " + std::to_string(untag(v));
  if (is_link(v)) return load_acq(&hdr(v)->stamp) == sync::k_stamp_tbd ? "unsettled link" : "";
  header* h = hdr(v);
  if (h->stamp == sync::k_stamp_tbd) return "unsettled stamp";
  if (h->lock & 1) return "lock held";
  if (h->kind == uint8_t(kind::leaf))
    return check_leaf(h, path, int64_t(path.size()) == parent_depth, records, prev_key, any);
  if (h->kind < uint8_t(kind::sparse) || h->kind > uint8_t(kind::full)) return "unknown node kind";
  const uint64_t d = bdepth(h);
  if (int64_t(d) <= parent_depth || d < path.size()) return "inner node depth not increasing";
  if (h->depth != 0) return "byte inner node with a u64 depth";
  std::string_view pre(btail(h)->prefix, d);
  if (pre.substr(0, path.size()) != path) return "prefix disagrees with the path";
  if (h->kind == uint8_t(kind::sparse)) {
    auto* s = reinterpret_cast<sparse*>(h);
    if (h->count == 0 || h->count > k_sparse_cap) return "bad sparse count";
    for (unsigned i = 1; i < h->count; ++i)
      if (s->keys[i - 1] >= s->keys[i]) return "sparse keys not sorted";
  } else if (h->kind == uint8_t(kind::indirect)) {
    auto* s = reinterpret_cast<indirect*>(h);
    unsigned c = 0;
    for (auto w : s->bits) c += __builtin_popcountll(w);
    if (c != h->count || c > k_indirect_cap) return "indirect count disagrees with its bitmap";
  }
  std::string err, sub;
  each_slot(h, [&](int b, uint64_t* s) {
    sub.assign(pre);
    if (b >= 0) sub.push_back(char(b));
    err = check_slot(s, int64_t(d), sub, records, prev_key, any);
    return err.empty();
  });
  return err;
}

check_result bytes_tree::check() {
  auto g = p_.pin();
  if (root_->magic != k_bytes_root_magic) return check_result::fail("root magic");
  if (root_->h.lock & 1) return check_result::fail("root lock held");
  uint64_t records = 0;
  std::string path, prev;
  bool any = false;
  std::string e = check_slot(&root_->slot, -1, path, records, prev, any);
  if (!e.empty()) return check_result::fail("permart: " + e);
  return {};
}

index_stats bytes_tree::stats() {
  index_stats s;
  uint64_t counts[6] = {}, records = 0, log_entries = 0, links = 0, blocks = 0;
  auto g = p_.pin();
  auto walk = [&](auto&& self, uint64_t v) -> void {
    links += is_link(v);
    if (!v || is_link(v)) return;
    header* h = hdr(v);
    ++counts[h->kind];
    if (h->kind == uint8_t(kind::leaf)) {
      bpair view[k_bmax_view];
      records += leaf_view(h, view, 0, true);
      each_block(h, [&](uint64_t) { ++blocks; });
      if (leaf_logged(h))
        for (auto& e : reinterpret_cast<blog_leaf*>(h)->log) log_entries += (e.meta & k_log_valid) ? 1 : 0;
      return;
    }
    each_slot(h, [&](int, uint64_t* c) {
      self(self, load_current(c));
      return true;
    });
  };
  walk(walk, load_current(&root_->slot));
  s.records = records;
  auto u = p_.usage();
  s.pm_bytes_used = u.used_bytes;
  s.pm_bytes_reserved = u.reserved_bytes;
  s.dram_bytes = u.dram_bytes + sizeof(*this);
  s.extra = {{"leaves", double(counts[uint8_t(kind::leaf)])},
             {"sparse_nodes", double(counts[uint8_t(kind::sparse)])},
             {"indirect_nodes", double(counts[uint8_t(kind::indirect)])},
             {"full_nodes", double(counts[uint8_t(kind::full)])},
             {"version_links", double(links)},  // blocks, dropped by recovery
             {"kv_blocks", double(blocks)}};
  if (log_) s.extra.push_back({"log_entries", double(log_entries)});
  return s;
}

}  // namespace pmindex::art::permart::detail

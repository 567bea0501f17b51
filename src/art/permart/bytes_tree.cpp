// PermART keys=bytes: open, recovery, tracing, invariant check, stats.
#include <string>

#include "art/permart/bytes_tree.hpp"

namespace pmindex::art::permart::detail {

bytes_tree::bytes_tree(pm::pool& p, open_kind k, const index_config& cfg, bool log)
    : bytes_index(p), core(p, cfg, log), rd_(p) {
  open_root(k, k_bytes_root_magic, k_bytes_root_magic_v2, "permart");
  if (k == open_kind::dirty) recover_slot(&root_->slot, -1);
  finish_open(k);
  keep_remove_reserve<bytes_leaves>();
}

// A pair read from a pool after a crash: lengths within the limits, its
// blocks inside the heap and of the lengths the pair says.
void bytes_tree::recover_pair(const bpair& kv) {
  if (kv.klen > k_max_key || kv.vlen > k_max_value) throw error(errc::corrupt, "permart: pair length out of range");
  uint64_t kb = pair_reader::key_block(kv), vb = pair_reader::value_block(kv);
  // A length past the inline form needs its block (a zeroed word would
  // name the pool header).
  if ((kv.klen > k_inline_key && !kb) || (kv.vlen > k_inline_value && !vb))
    throw error(errc::corrupt, "permart: pair without its block");
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
      if (!leaf_sane<bytes_leaves>(h) || !p_.valid_block(off, bleaf_block_size(h)))
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
          !inner_sane(h))
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
  trace_tree(
      sink, [&](const header* h) { return block_size(h); }, all_slots,
      [&](header* h) { each_block(h, [&](uint64_t b) { sink.add(b, common::kv_block_size(p_, b)); }); });
}

// Leaf invariants: count and capacity, log entries well formed, the view
// sorted and non-empty, every key on the leaf's path (an end slot's leaf
// holds exactly the path), keys ascending across the tree, blocks allocated.
std::string bytes_tree::check_leaf(header* h, std::string_view path, bool end_slot, uint64_t& records,
                                   std::string& prev_key, bool& any) {
  if (std::string e = check_leaf_shape<bytes_leaves>(h); !e.empty()) return e;
  const bpair* base = bleaf_pairs(h);
  // Every pair's lengths and blocks before any key is read (a damaged pool).
  try {
    for (unsigned i = 0; i < h->count; ++i) recover_pair(base[i]);
    if (leaf_logged(h))
      for (auto& e : reinterpret_cast<blog_leaf*>(h)->log)
        if (e.meta & k_log_valid) recover_pair(e.kv);
  } catch (const error& e) {
    return e.what();
  }
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
  header* h;
  if (std::string e = check_word(slot, h); !e.empty() || !h) return e;
  const bool end_slot = int64_t(path.size()) == parent_depth;
  if (h->kind == uint8_t(kind::leaf)) return check_leaf(h, path, end_slot, records, prev_key, any);
  if (end_slot) return "inner node in an end slot";
  const uint64_t d = bdepth(h);
  if (int64_t(d) <= parent_depth || d < path.size()) return "inner node depth not increasing";
  // The prefix (d bytes) ends the node: a damaged depth must not read past its block.
  if (d > k_max_key || binner_size(h->kind, d) > p_.block_size(untag(load_acq(slot))))
    return "inner node larger than its block";
  if (h->depth != 0) return "byte inner node with a u64 depth";
  std::string_view pre(btail(h)->prefix, d);
  if (pre.substr(0, path.size()) != path) return "prefix disagrees with the path";
  if (std::string e = check_inner_shape(h); !e.empty()) return e;
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
  uint64_t records = 0;
  std::string path, prev;
  bool any = false;
  return check_root(k_bytes_root_magic, [&] { return check_slot(&root_->slot, -1, path, records, prev, any); });
}

index_stats bytes_tree::stats() {
  uint64_t blocks = 0;
  index_stats s = stats_of<bytes_leaves>(
      all_slots,
      [&](header* h) {
        each_block(h, [&](uint64_t) { ++blocks; });
        bpair view[k_bmax_view];
        return leaf_view(h, view, 0, true);
      },
      sizeof(*this));
  s.extra.push_back({"kv_blocks", double(blocks)});
  return s;
}

}  // namespace pmindex::art::permart::detail

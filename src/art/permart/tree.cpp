// PermART: open, recovery, tracing, invariant check, stats, registration.
#include <chrono>
#include <string>

#include "pmindex/error.hpp"
#include "tree.hpp"

namespace pmindex::art::permart {

namespace detail {

tree::tree(pm::pool& p, open_kind k, const index_config& cfg, bool log) : u64_index(p), core(p, cfg, log) {
  open_root(k, k_root_magic, k_root_magic_v2, "permart");
  if (k == open_kind::dirty) recover_slot(&root_->slot, -1);
  finish_open(k);
  keep_remove_reserve<u64_leaves>();
}

// After a crash: makes every reachable slot a plain durable pointer and every
// node's volatile state initial. Allocates nothing; writes only what differs.
void tree::recover_slot(uint64_t* slot, int parent_depth) {
  header* h = recover_node(slot);
  if (!h) return;
  uint64_t w = untag(*slot);
  switch (static_cast<kind>(h->kind)) {
    case kind::leaf:
      if (!leaf_sane<u64_leaves>(h))
        throw error(errc::corrupt, "permart: damaged leaf");
      if (leaf_logged(h)) recover_log(reinterpret_cast<log_leaf*>(h)->log);
      return;
    case kind::sparse:
    case kind::indirect:
    case kind::full:
      if (int(h->depth) <= parent_depth || h->depth > 7 || w + block_size(h) > p_.size() || !inner_sane(h))
        throw error(errc::corrupt, "permart: damaged inner node");
      each_child(h, [&](unsigned, uint64_t* s) {
        recover_slot(s, h->depth);
        return true;
      });
      return;
    default: throw error(errc::corrupt, "permart: unknown node kind");
  }
}

void tree::trace(pm::pool::trace_sink& sink) {
  trace_tree(sink, block_size, child_slots, [](header*) {});
}

// Structural invariants (quiescent tree): slots untagged and allocated,
// depths increasing, prefixes consistent with the path, children in key
// order, leaves sorted, non-empty and within their capacity, keys globally
// ascending, no lock held, every stamp settled.
std::string tree::check_slot(uint64_t* slot, int parent_depth, uint64_t path, uint64_t& records,
                             uint64_t& prev_key, bool& any) {
  header* h;
  if (std::string e = check_word(slot, h); !e.empty() || !h) return e;
  uint64_t pmask = prefix_mask(unsigned(parent_depth + 1));
  if (h->kind == uint8_t(kind::leaf)) {
    if (std::string e = check_leaf_shape<u64_leaves>(h); !e.empty()) return e;
    pair view[k_max_view];
    unsigned n = leaf_view(h, view, 0, true);
    for (unsigned i = 1; leaf_logged(h) && i < h->count; ++i)
      if (leaf_pairs(h)[i - 1].key >= leaf_pairs(h)[i].key) return "log leaf base not sorted";
    if (n == 0 || n > k_big_leaf) return "leaf view empty or over capacity";
    for (unsigned i = 0; i < n; ++i) {
      uint64_t k = view[i].key;
      if ((k ^ path) & pmask) return "leaf key " + std::to_string(k) + " off its path";
      if (any && k <= prev_key) return "keys out of order at " + std::to_string(k);
      prev_key = k;
      any = true;
      ++records;
    }
    return {};
  }
  unsigned d = h->depth;
  if (int(d) <= parent_depth || d > 7) return "inner node depth not increasing";
  if ((h->prefix ^ path) & pmask) return "prefix disagrees with the path";
  if (h->prefix & ~prefix_mask(d)) return "prefix has bytes beyond its depth";
  std::string err = check_inner_shape(h);
  if (err.empty()) {
    // Overlap the misses on the children (see stats_of).
    each_child(h, [&](unsigned, uint64_t* s) {
      if (uint64_t w = load_acq(s)) __builtin_prefetch(hdr(w));
      return true;
    });
    each_child(h, [&](unsigned b, uint64_t* s) {
      err = check_slot(s, int(d), child_min(h->prefix, d, b), records, prev_key, any);
      return err.empty();
    });
  }
  return err;
}

check_result tree::check() {
  uint64_t records = 0, prev = 0;
  bool any = false;
  return check_root(k_root_magic, [&] { return check_slot(&root_->slot, -1, 0, records, prev, any); });
}

index_stats tree::stats() {
  return stats_of<u64_leaves>(
      child_slots,
      [&](header* h) {
        pair view[k_max_view];
        return leaf_view(h, view, 0, true);
      },
      sizeof(*this));
}

}  // namespace detail

}  // namespace pmindex::art::permart

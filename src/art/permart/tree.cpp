// PermART: open, recovery, tracing, invariant check, stats, registration.
#include <chrono>
#include <string>

#include "pmindex/error.hpp"
#include "tree.hpp"

namespace pmindex::art::permart {

namespace detail {

tree::tree(pm::pool& p, open_kind k, const index_config& cfg, bool log) : u64_index(p), core(p, cfg, log) {
  open_root(k, k_root_magic, "permart");
  if (k == open_kind::dirty) recover_slot(&root_->slot, -1);
  finish_open(k);
}

// After a crash: makes every reachable slot a plain durable pointer and every
// node's volatile state initial. Allocates nothing; writes only what differs.
void tree::recover_slot(uint64_t* slot, int parent_depth) {
  header* h = recover_node(slot);
  if (!h) return;
  uint64_t w = untag(*slot);
  switch (static_cast<kind>(h->kind)) {
    case kind::leaf:
      if ((h->cap != k_small_leaf && h->cap != k_big_leaf) || h->count == 0 || h->count > h->cap ||
          (leaf_logged(h) && h->cap != k_big_leaf))
        throw error(errc::corrupt, "permart: damaged leaf");
      if (leaf_logged(h)) recover_log(reinterpret_cast<log_leaf*>(h)->log);
      return;
    case kind::sparse:
    case kind::indirect:
    case kind::full:
      if (int(h->depth) <= parent_depth || h->depth > 7 || w + block_size(h) > p_.size())
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
  trace_root(sink);
  auto walk = [&](auto&& self, uint64_t v) -> void {
    if (!v) return;
    if (is_link(v)) {
      sink.add(untag(v), k_link_size);
      return;
    }
    header* h = hdr(v);
    sink.add(untag(v), block_size(h));
    each_child(h, [&](unsigned, uint64_t* s) {
      self(self, load_acq(s) & ~k_unpersisted);
      return true;
    });
  };
  walk(walk, load_acq(&root_->slot) & ~k_unpersisted);
}

// Structural invariants (quiescent tree): slots untagged and allocated,
// depths increasing, prefixes consistent with the path, children in key
// order, leaves sorted, non-empty and within their capacity, keys globally
// ascending, no lock held, every stamp settled.
std::string tree::check_slot(uint64_t* slot, int parent_depth, uint64_t path, uint64_t& records,
                             uint64_t& prev_key, bool& any) {
  uint64_t v = load_acq(slot);
  if (v & k_unpersisted) return "slot with UNPERSISTED bit";
  if (!v) return {};
  if (!p_.is_allocated(untag(v))) return "slot points to a free block " + std::to_string(untag(v));
  if (is_link(v)) return load_acq(&hdr(v)->stamp) == sync::k_stamp_tbd ? "unsettled link" : "";
  header* h = hdr(v);
  if (h->stamp == sync::k_stamp_tbd) return "unsettled stamp";
  if (h->lock & 1) return "lock held";
  uint64_t pmask = prefix_mask(unsigned(parent_depth + 1));
  if (h->kind == uint8_t(kind::leaf)) {
    if ((h->cap != k_small_leaf && h->cap != k_big_leaf) || h->count == 0 || h->count > h->cap ||
        leaf_cap_for(h->count) != h->cap || (leaf_logged(h) && (!log_ || h->cap != k_big_leaf)))
      return "bad leaf count/capacity";
    pair view[k_max_view];
    unsigned n = leaf_view(h, view, 0, true);
    if (leaf_logged(h)) {
      auto* l = reinterpret_cast<log_leaf*>(h);
      for (unsigned j = 0; j < 2; ++j) {
        uint64_t m = l->log[j].meta;
        if (m & ~(k_log_valid | k_log_delete)) return "log entry with UNPERSISTED or unknown bits";
        if (m && !(m & k_log_valid)) return "log entry with bits but not VALID";
        if (j == 1 && m && !l->log[0].meta) return "log entry 1 used before entry 0";
        if (m && l->log[j].stamp == sync::k_stamp_tbd) return "unsettled log entry";
      }
      for (unsigned i = 1; i < h->count; ++i)
        if (leaf_pairs(h)[i - 1].key >= leaf_pairs(h)[i].key) return "log leaf base not sorted";
    }
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
  if (h->kind < uint8_t(kind::sparse) || h->kind > uint8_t(kind::full)) return "unknown node kind";
  unsigned d = h->depth;
  if (int(d) <= parent_depth || d > 7) return "inner node depth not increasing";
  if ((h->prefix ^ path) & pmask) return "prefix disagrees with the path";
  if (h->prefix & ~prefix_mask(d)) return "prefix has bytes beyond its depth";
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
  std::string err;
  each_child(h, [&](unsigned b, uint64_t* s) {
    err = check_slot(s, int(d), child_min(h->prefix, d, b), records, prev_key, any);
    return err.empty();
  });
  return err;
}

check_result tree::check() {
  auto g = p_.pin();
  if (root_->magic != k_root_magic) return check_result::fail("root magic");
  if (root_->h.lock & 1) return check_result::fail("root lock held");
  uint64_t records = 0, prev = 0;
  bool any = false;
  std::string e = check_slot(&root_->slot, -1, 0, records, prev, any);
  if (!e.empty()) return check_result::fail("permart: " + e);
  return {};
}

index_stats tree::stats() {
  index_stats s;
  uint64_t counts[6] = {}, records = 0, log_entries = 0, links = 0;
  auto g = p_.pin();
  auto walk = [&](auto&& self, uint64_t v) -> void {
    links += is_link(v);
    if (!v || is_link(v)) return;
    header* h = hdr(v);
    ++counts[h->kind];
    if (h->kind == uint8_t(kind::leaf)) {
      pair view[k_max_view];
      unsigned n = leaf_view(h, view, 0, true);
      records += n;
      if (leaf_logged(h))
        for (auto& e : reinterpret_cast<log_leaf*>(h)->log) log_entries += (e.meta & k_log_valid) ? 1 : 0;
      return;
    }
    each_child(h, [&](unsigned, uint64_t* c) {
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
             {"version_links", double(links)}};  // blocks, dropped by recovery
  if (log_) s.extra.push_back({"log_entries", double(log_entries)});
  return s;
}

}  // namespace detail

}  // namespace pmindex::art::permart

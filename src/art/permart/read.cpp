// PermART reads. Point lookups read the current version of each slot (and
// settle stamps they meet, so a later snapshot cannot miss what they saw).
// Scans and ranges read every slot at one snapshot stamp: the version whose
// stamp is <= the snapshot's, walking previous versions back as needed.
#include "tree.hpp"

#include "common/prefetch.hpp"

namespace pmindex::art::permart::detail {

unsigned tree::leaf_view(header* h, pair* out, uint64_t ts, bool current) const {
  return view_of<u64_leaves>(h, out, ts, current, [](pair* kv, unsigned n, const log_entry& e, bool del) {
    return apply_log(kv, n, e.key, e.value, del);
  });
}

std::optional<uint64_t> tree::lookup(uint64_t key) {
  auto g = p_.pin();
  uint64_t* slot = &root_->slot;
  for (;;) {
    uint64_t v = load_current(slot);
    if (!v || is_link(v)) return std::nullopt;
    header* n = hdr(v);
    if (n->kind == uint8_t(kind::leaf)) {
      pair view[k_max_view];
      const pair* kv = leaf_pairs(n);
      unsigned cnt = n->count;
      if (leaf_logged(n)) cnt = leaf_view(n, view, 0, true), kv = view;
      unsigned i = lower_bound(kv, cnt, key);
      if (i < cnt && kv[i].key == key) return kv[i].value;
      return std::nullopt;
    }
    if ((key ^ n->prefix) & prefix_mask(n->depth)) return std::nullopt;
    slot = find_child(n, key_byte(key, n->depth));
    if (!slot) return std::nullopt;
  }
}

// In-order walk of the subtree at node `v` (as of `ts`), restricted to
// [lo, hi]; sink(key, value) -> false stops the walk.
// How many of node n's children (key bytes from..last) a scan that wants
// `wanted` records asks for at once. A full node's first child in range
// tells what the others are: inner nodes hold many records each, so asking
// for `wanted` of them (a scan100 at the top levels: ~100 nodes, two levels)
// fills the memory pipeline with lines the scan never reads; a few are
// enough. Leaves (and listed nodes, the lower levels) keep `wanted`. A hint:
// the slot is read racily (the scan is pinned, the block stays readable).
size_t tree::children_ahead(header* n, unsigned from, unsigned last, size_t wanted) const {
  if (n->kind != uint8_t(kind::full)) return wanted;
  auto* f = reinterpret_cast<full*>(n);
  for (unsigned b = from; b <= last; ++b) {
    uint64_t c = __atomic_load_n(&f->slots[b], __ATOMIC_RELAXED);
    if (!c) continue;
    if (is_link(c) || hdr(c)->kind == uint8_t(kind::leaf)) return wanted;
    return std::min<size_t>(wanted, k_inner_ahead);
  }
  return wanted;
}

template <class Sink>
bool tree::visit_leaf(header* n, uint64_t lo, uint64_t hi, uint64_t ts, Sink& sink) const {
  if (leaf_logged(n)) return visit_logged_leaf(n, lo, hi, ts, sink);
  const pair* kv = leaf_pairs(n);
  const unsigned cnt = n->count;
  for (unsigned i = lower_bound(kv, cnt, lo); i < cnt && kv[i].key <= hi; ++i)
    if (!sink(kv[i].key, kv[i].value)) return false;
  return true;
}

template <class Sink>
bool tree::visit_logged_leaf(header* n, uint64_t lo, uint64_t hi, uint64_t ts, Sink& sink) const {
  pair view[k_max_view];
  const unsigned cnt = leaf_view(n, view, ts, mut_.on(mutant::scan_not_atomic));
  for (unsigned i = lower_bound(view, cnt, lo); i < cnt && view[i].key <= hi; ++i)
    if (!sink(view[i].key, view[i].value)) return false;
  return true;
}

template <class Sink>
bool tree::visit(uint64_t v, uint64_t lo, uint64_t hi, uint64_t ts, Sink& sink) const {
  header* n = hdr(v);
  if (n->kind == uint8_t(kind::leaf)) return visit_leaf(n, lo, hi, ts, sink);
  unsigned d = n->depth;
  uint64_t prefix = n->prefix;
  uint64_t nmin = prefix & prefix_mask(d), nmax = nmin | ~prefix_mask(d);
  if (nmax < lo || nmin > hi) return true;
  unsigned from = lo > nmin ? key_byte(lo, d) : 0;
  const unsigned last = hi < nmax ? key_byte(hi, d) : 255;
  const size_t wanted = sink.wanted();
  if (n->kind != uint8_t(kind::full)) {
    // A listed node: its children in range are put in key order once, for
    // both the prefetch and the walk (ordering a node whose bytes were
    // appended unsorted was a quarter of a scan at 10K records, done twice).
    uint64_t* slot[k_indirect_cap];
    unsigned c = 0;
    each_child_from(n, from, [&](unsigned b, uint64_t* s) {
      if (b > last) return false;
      slot[c++] = s;
      return true;
    });
    for (unsigned i = 0, a = unsigned(std::min<size_t>(c, wanted)); i < a; ++i)
      __builtin_prefetch(hdr(__atomic_load_n(slot[i], __ATOMIC_RELAXED)));
    for (unsigned i = 0; i < c; ++i) {
      const uint64_t ch = load_snap(slot[i], ts);
      if (!ch) continue;
      header* h = hdr(ch);
      if (!(h->kind == uint8_t(kind::leaf) ? visit_leaf(h, lo, hi, ts, sink) : visit(ch, lo, hi, ts, sink))) return false;
    }
    return true;
  }
  const size_t ahead = children_ahead(n, from, last, wanted);
  prefetch_children(n, from, last, ahead);
  const bool window = ahead < wanted;  // a full node of inner children: keep `ahead` slots asked for
  return each_child_from(n, from, [&](unsigned b, uint64_t* s) {
    if (child_max(prefix, d, b) < lo) return true;
    if (child_min(prefix, d, b) > hi) return false;  // and every later child
    if (window) {
      if (b + ahead <= last)
        if (uint64_t a = __atomic_load_n(s + ahead, __ATOMIC_RELAXED)) __builtin_prefetch(hdr(a));
      // Two levels: at 1M records a scan100 crosses ~6 listed nodes of ~11
      // leaves, whose leaves were asked for only when the walk entered each,
      // one node's misses after another's. So the next listed node's leaves
      // are asked for while this child is walked, and the one after its
      // lines, while the records before them (k_scan_prefetch a node, a
      // guess) will likely not end the scan.
      const size_t left = sink.wanted();
      if (left > k_scan_prefetch && b + 1 <= last)
        ask_listed(__atomic_load_n(s + 1, __ATOMIC_RELAXED), false, left - k_scan_prefetch);
      if (left > 2 * k_scan_prefetch && b + 2 <= last) ask_listed(__atomic_load_n(s + 2, __ATOMIC_RELAXED), true, 0);
    }
    const uint64_t c = load_snap(s, ts);
    if (!c) return true;
    header* h = hdr(c);
    return h->kind == uint8_t(kind::leaf) ? visit_leaf(h, lo, hi, ts, sink) : visit(c, lo, hi, ts, sink);
  });
}

void tree::ask_listed(uint64_t v, bool all, size_t budget) const {
  if (!v || is_link(v)) return;
  header* h = hdr(v);
  const uint8_t k = __atomic_load_n(&h->kind, __ATOMIC_RELAXED);
  if (k != uint8_t(kind::sparse) && k != uint8_t(kind::indirect)) return;
  if (all)
    common::prefetch_lines(h, k == uint8_t(kind::sparse) ? sizeof(sparse) : sizeof(indirect), 64);
  else
    prefetch_children(h, 0, 255, budget);
}

template <class Sink>
void tree::snapshot(uint64_t lo, uint64_t hi, Sink& sink) {
  auto g = p_.pin();  // before the stamp: see versioned_ptr.hpp, reclamation
  uint64_t ts;
  if (uint64_t v = snapshot_root(ts)) visit(v, lo, hi, ts, sink);
}

// What a snapshot walk fills: scan() up to `count` records into an array,
// range() every record up to `hi` into a vector. wanted(): how many children
// of a node are worth prefetching (each holds at least one record).
namespace {
struct scan_sink {
  record* out;
  size_t count, n = 0;
  bool operator()(uint64_t k, uint64_t v) {
    out[n++] = {k, v};
    return n < count;
  }
  size_t wanted() const { return count - n; }
};
struct range_sink {
  std::vector<record>* out;
  bool operator()(uint64_t k, uint64_t v) {
    out->push_back({k, v});
    return true;
  }
  static size_t wanted() { return k_scan_prefetch; }  // unknown: up to `hi`
};
}  // namespace

size_t tree::scan(uint64_t from, size_t count, record* out) {
  if (count == 0) return 0;
  scan_sink sink{out, count};
  snapshot(from, ~uint64_t{0}, sink);
  return sink.n;
}

size_t tree::range(uint64_t lo, uint64_t hi, std::vector<record>& out) {
  size_t n0 = out.size();
  if (lo > hi) return 0;
  range_sink sink{&out};
  snapshot(lo, hi, sink);
  return out.size() - n0;
}

}  // namespace pmindex::art::permart::detail

// PermART reads. Point lookups read the current version of each slot (and
// settle stamps they meet, so a later snapshot cannot miss what they saw).
// Scans and ranges read every slot at one snapshot stamp: the version whose
// stamp is <= the snapshot's, walking previous versions back as needed.
#include "tree.hpp"

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
template <class Sink>
bool tree::visit(uint64_t v, uint64_t lo, uint64_t hi, uint64_t ts, Sink& sink) const {
  header* n = hdr(v);
  if (n->kind == uint8_t(kind::leaf)) {
    pair view[k_max_view];
    const pair* kv = leaf_pairs(n);
    unsigned cnt = n->count;
    if (leaf_logged(n)) cnt = leaf_view(n, view, ts, mut_.on(mutant::scan_not_atomic)), kv = view;
    for (unsigned i = lower_bound(kv, cnt, lo); i < cnt && kv[i].key <= hi; ++i)
      if (!sink(kv[i].key, kv[i].value)) return false;
    return true;
  }
  unsigned d = n->depth;
  uint64_t prefix = n->prefix;
  uint64_t nmin = prefix & prefix_mask(d), nmax = nmin | ~prefix_mask(d);
  if (nmax < lo || nmin > hi) return true;
  unsigned from = lo > nmin ? key_byte(lo, d) : 0;
  prefetch_children(n, from, hi < nmax ? key_byte(hi, d) : 255, sink.wanted());
  return each_child_from(n, from, [&](unsigned b, uint64_t* s) {
    if (child_max(prefix, d, b) < lo) return true;
    if (child_min(prefix, d, b) > hi) return false;  // and every later child
    uint64_t c = load_snap(s, ts);
    return !c || visit(c, lo, hi, ts, sink);
  });
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

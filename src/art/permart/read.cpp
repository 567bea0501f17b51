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

tree::slot_guess tree::guess_from(const header* model) {
  return core::guess_from(model, 0, [](bool logged, uint8_t cap) -> uint64_t {
    return logged ? sizeof(log_leaf) : cap > k_small_leaf ? leaf_size(k_big_leaf) : 64;
  });
}

void tree::list_children(header* n, unsigned b, const header* model, walk_state& s, walk_list& g) const {
  const unsigned d = n->depth;
  const uint64_t prefix = n->prefix;
  if (!model && n->kind == uint8_t(kind::full)) {  // its first child in range is the model (racily)
    auto* f = reinterpret_cast<full*>(n);
    for (unsigned c = b; c < 256 && !model; ++c)
      if (uint64_t v = __atomic_load_n(&f->slots[c], __ATOMIC_RELAXED); v && !is_link(v)) model = hdr(v);
  }
  const slot_guess sg = guess_from(model);
  each_child_from(n, b, [&](unsigned c, uint64_t* slot) {
    const uint64_t m = child_min(prefix, d, c);
    if (m > s.hi) return false;
    const uint64_t v = __atomic_load_n(slot, __ATOMIC_RELAXED);
    if (!v) return true;
    if (g.full()) {
      s.cut_at = std::min(s.cut_at, m);
      return false;
    }
    common::prefetch_lines(hdr(v), sg.bytes);
    g.e[g.n] = reinterpret_cast<uintptr_t>(slot);
    g.min[g.n++] = m;
    g.guessed += sg.records;
    ++g.slots;
    return true;
  });
}

// The path to s.from below v (read at the stamp): what hangs right of it
// into s.now, deepest first (it sorts first).
void tree::seed(uint64_t v, walk_state& s) const {
  header* n = hdr(v);
  if (n->kind == uint8_t(kind::leaf)) return list_leaf(n, s.from, s, s.now);
  const unsigned d = n->depth;
  const uint64_t nmin = n->prefix & prefix_mask(d), nmax = nmin | ~prefix_mask(d);
  if (nmax < s.from) return;                                      // all below the start
  if (nmin > s.from) return list_children(n, 0, nullptr, s, s.now);  // all after it
  const unsigned c = key_byte(s.from, d);
  // The slots right of the path are read after the walk below it: asked
  // for now, they come while it waits on the path's nodes.
  if (n->kind == uint8_t(kind::full))
    common::prefetch_lines(reinterpret_cast<full*>(n)->slots + c, 3 * 64);
  else
    common::prefetch_lines(n, inner_size(n->kind), 64);
  const header* model = nullptr;
  if (uint64_t* slot = find_child(n, c))
    if (uint64_t p = load_snap(slot, s.ts)) {
      model = hdr(p);  // its siblings are likely alike
      seed(p, s);
    }
  if (c < 255) list_children(n, c + 1, model, s, s.now);
}

// One level: s.next is s.now from entry i on with every slot replaced by
// what it holds at the stamp (a leaf, or an inner node's children), up to
// its guessed fill.
void tree::expand(walk_state& s, size_t i) const {
  const walk_list& f = s.now;
  walk_list& g = s.next;
  g.n = g.guessed = g.slots = 0;
  for (; i < f.n; ++i) {
    if (g.full()) {
      s.cut_at = std::min(s.cut_at, f.min[i]);
      break;
    }
    const uintptr_t e = f.e[i];
    if (e & 1) {
      list_leaf(reinterpret_cast<header*>(e & ~uintptr_t{1}), f.min[i], s, g);
      continue;
    }
    const uint64_t v = load_snap(reinterpret_cast<uint64_t*>(e), s.ts);
    if (!v) continue;
    header* h = hdr(v);
    if (h->kind == uint8_t(kind::leaf)) {
      common::prefetch_lines(h, leaf_block_size(h), 64);  // read in a later pass
      list_leaf(h, f.min[i], s, g);
    } else {
      list_children(h, 0, nullptr, s, g);
    }
  }
  std::swap(s.now, s.next);
}

// Walks until the sink is full or everything up to hi was read. Each pass
// first reads, in key order, the leaves its list holds or names, up to the
// first slot that holds an inner node; the rest of the list is expanded.
template <class Sink>
void tree::snapshot(uint64_t lo, uint64_t hi, Sink& sink) {
  auto g = p_.pin();  // before the stamp: see versioned_ptr.hpp, reclamation
  thread_local std::vector<uint64_t> space;
  constexpr size_t cap = k_batch + 2;  // a list holds at most want + 1 entries
  if (space.size() < 4 * cap) space.resize(4 * cap);
  walk_state s{};
  s.hi = hi;
  const uint64_t root = snapshot_root(s.ts);
  for (s.from = lo; root;) {
    s.cut_at = ~uint64_t{0};
    s.now = {reinterpret_cast<uintptr_t*>(space.data()), space.data() + cap};
    s.next = {reinterpret_cast<uintptr_t*>(space.data() + 2 * cap), space.data() + 3 * cap};
    s.now.want = std::min(sink.wanted(), k_batch);
    seed(root, s);
    for (size_t i = 0;;) {
      for (; i < s.now.n; ++i) {
        const uintptr_t e = s.now.e[i];
        header* h = reinterpret_cast<header*>(e & ~uintptr_t{1});
        if (!(e & 1)) {
          const uint64_t v = load_snap(reinterpret_cast<uint64_t*>(e), s.ts);
          if (!v) continue;
          h = hdr(v);
          if (h->kind != uint8_t(kind::leaf)) break;
        }
        if (!visit_leaf(h, s.from, hi, s.ts, sink)) return;
      }
      if (i == s.now.n) break;
      s.next.want = std::min(sink.wanted(), k_batch);
      expand(s, i);
      i = 0;
    }
    if (s.cut_at == ~uint64_t{0}) return;
    s.from = s.cut_at;  // everything in [from, cut_at) was read
  }
}

// What a snapshot walk fills: scan() up to `count` records into an array,
// range() every record up to `hi` into a vector. wanted(): how many records
// a walk lists for.
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
  static size_t wanted() { return SIZE_MAX; }  // up to `hi`: each walk lists what it can
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

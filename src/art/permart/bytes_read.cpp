// PermART keys=bytes reads (as read.cpp). A lookup does not compare the
// prefixes on its way down: every pair holds its whole key, so the leaf
// decides. Scans and ranges read every slot at one snapshot stamp, level by
// level, and compare prefixes only along the path of their start.
#include <algorithm>
#include <cstring>
#include <vector>

#include "common/prefetch.hpp"

#include "art/permart/bytes_tree.hpp"

namespace pmindex::art::permart::detail {

unsigned bytes_tree::leaf_view(header* h, bpair* out, uint64_t ts, bool current) const {
  return view_of<bytes_leaves>(h, out, ts, current, [&](bpair* kv, unsigned n, const blog_entry& e, bool del) {
    const std::string_view k = rd_.key(e.kv);
    unsigned i = rd_.lower_bound(kv, n, k);
    return apply_entry(kv, n, i, i < n && rd_.key(kv[i]) == k, e.kv, del);
  });
}

bool bytes_tree::lookup(std::string_view key, std::string* value) {
  check_key(key);
  const bkey k(key);
  auto g = p_.pin();
  uint64_t* slot = &root_->slot;
  for (;;) {
    uint64_t v = load_current(slot);
    if (!v || is_link(v)) return false;
    header* n = hdr(v);
    if (n->kind == uint8_t(kind::leaf)) {
      bpair view[k_bmax_view];
      const bpair* kv = bleaf_pairs(n);
      unsigned cnt = n->count;
      if (leaf_logged(n)) cnt = leaf_view(n, view, 0, true), kv = view;
      for (unsigned i = 0; i < cnt; ++i)
        if (rd_.is(kv[i], k)) {
          if (value) value->assign(rd_.value(kv[i]));
          return true;
        }
      return false;
    }
    const uint64_t d = bdepth(n);
    if (key.size() < d) return false;  // every key below is at least d bytes
    slot = key.size() == d ? &btail(n)->end : find_child(n, uint8_t(key[d]));
    if (!slot) return false;
  }
}

// The pairs of leaf n (as of ts) within the bounds, in order; false stops
// the walk (the sink said so, or a key passed hi). Out of line: the view of
// a logged leaf, with its stack array, stays off the scan's frame.
template <class Sink>
[[gnu::noinline]] bool bytes_tree::visit_leaf(header* n, const bounds& b, bool lo_tight, bool hi_tight, uint64_t ts,
                                              Sink& sink) const {
  bpair view[k_bmax_view];
  const bpair* kv = bleaf_pairs(n);
  unsigned cnt = n->count;
  if (leaf_logged(n)) cnt = leaf_view(n, view, ts, mut_.on(mutant::scan_not_atomic)), kv = view;
  for (unsigned i = lo_tight ? rd_.lower_bound(kv, cnt, b.lo) : 0; i < cnt; ++i) {
    const std::string_view k = rd_.key(kv[i]);
    if (hi_tight && k > b.hi) return false;
    if (!sink(k, rd_.value(kv[i]))) return false;
  }
  return true;
}

// (An inner node's end slot follows its struct: a listing reads it first.)
bytes_tree::slot_guess bytes_tree::guess_from(const header* model) {
  return core::guess_from(model, 8, [](bool logged, uint8_t cap) -> uint64_t {
    return logged ? sizeof(blog_leaf) : bleaf_size(cap <= k_bbig_leaf ? cap : k_bbig_leaf);
  });
}

void bytes_tree::list_slots(header* n, bool with_end, unsigned b, const header* model, walk_list& g) const {
  // (A slot empty now was empty at every stamp a walk can hold: a remove
  // under a live snapshot leaves a version link.)
  if (with_end)
    if (uint64_t* es = &btail(n)->end; const uint64_t c = __atomic_load_n(es, __ATOMIC_RELAXED)) {
      if (g.full()) return void(g.cut = true);
      __builtin_prefetch(hdr(c));
      g.e[g.n++] = reinterpret_cast<uintptr_t>(es);
      ++g.guessed, ++g.slots;
    }
  if (!model && n->kind == uint8_t(kind::full)) {  // its first child in range is the model (racily)
    auto* f = reinterpret_cast<full*>(n);
    for (unsigned c = b; c < 256 && !model; ++c)
      if (uint64_t v = __atomic_load_n(&f->slots[c], __ATOMIC_RELAXED); v && !is_link(v)) model = hdr(v);
  }
  const slot_guess sg = guess_from(model);
  each_child_from(n, b, [&](unsigned, uint64_t* slot) {
    const uint64_t v = __atomic_load_n(slot, __ATOMIC_RELAXED);
    if (!v) return true;
    if (g.full()) return !(g.cut = true);
    common::prefetch_lines(hdr(v), sg.bytes);
    if (sg.tail) __builtin_prefetch(reinterpret_cast<char*>(hdr(v)) + sg.tail);
    g.e[g.n++] = reinterpret_cast<uintptr_t>(slot);
    g.guessed += sg.records, ++g.slots;
    return true;
  });
}

// The path to `from` below the root (read at the stamp): what hangs right
// of it into f in key order, deepest first. One loop down, then the levels
// back up (paths of long keys are deep: no recursion). tight: the leaf the
// path ends in, which may hold keys below `from`.
void bytes_tree::seed(std::string_view from, uint64_t v, uint64_t ts, walk_list& f, const header*& tight) const {
  struct step {
    header* n;
    unsigned b;             // the key byte taken
    const header* model;    // the child there: its siblings are likely alike
  };
  static thread_local std::vector<step> t_path;
  std::vector<step>& path = t_path;
  path.clear();
  while (v) {
    header* n = hdr(v);
    if (n->kind == uint8_t(kind::leaf)) {
      const unsigned below = rd_.lower_bound(bleaf_pairs(n), n->count, from);
      f.e[f.n++] = reinterpret_cast<uintptr_t>(n) | 1;
      f.guessed += n->count > below ? n->count - below : 1;
      tight = n;
      break;
    }
    // Every key below starts with the prefix P (d bytes); the end key is P.
    const uint64_t d = bdepth(n);
    const size_t m = std::min<uint64_t>(d, from.size());
    const int c = m ? std::memcmp(btail(n)->prefix, from.data(), m) : 0;  // an empty bound has no data()
    if (c < 0) break;  // all below `from`
    if (c > 0 || from.size() <= d) {  // all at or after it
      list_slots(n, true, 0, nullptr, f);
      break;
    }
    // `from` extends P: the end key sorts below it, so do smaller bytes.
    const unsigned b = uint8_t(from[d]);
    if (n->kind == uint8_t(kind::full))  // the slots right of the path, read on the way back up
      common::prefetch_lines(reinterpret_cast<full*>(n)->slots + b, 3 * 64);
    uint64_t* s = find_child(n, b);
    v = s ? load_snap(s, ts) : 0;
    path.push_back({n, b, v ? hdr(v) : nullptr});
  }
  for (size_t i = path.size(); i-- > 0 && !f.cut;) {
    if (path[i].b == 255) continue;
    if (f.full()) return void(f.cut = true);
    list_slots(path[i].n, false, path[i].b + 1, path[i].model, f);
  }
}

// One level: g is f with every slot replaced by what it holds at the stamp
// (a leaf; an inner node's end slot and children), up to g's guessed fill.
// True: g holds slots (another level).
bool bytes_tree::expand(const walk_list& f, walk_list& g, uint64_t ts) const {
  g.n = g.guessed = g.slots = 0;
  g.cut = false;
  for (size_t i = 0; i < f.n; ++i) {
    if (g.full()) {
      g.cut = true;
      break;
    }
    const uintptr_t e = f.e[i];
    if (e & 1) {
      g.e[g.n++] = e;
      g.guessed += std::max(1u, unsigned(reinterpret_cast<const header*>(e & ~uintptr_t{1})->count));
      continue;
    }
    const uint64_t v = load_snap(reinterpret_cast<uint64_t*>(e), ts);
    if (!v) continue;
    header* h = hdr(v);
    if (h->kind == uint8_t(kind::leaf)) {
      // Read after the last level: its pairs (most leaves hold one, in the
      // line already asked for), or a logged leaf's whole block.
      common::prefetch_lines(h, leaf_logged(h) ? sizeof(blog_leaf) : bleaf_size(std::min(h->count, h->cap)), 64);
      g.e[g.n++] = reinterpret_cast<uintptr_t>(h) | 1;
      g.guessed += std::max(1u, unsigned(h->count));
    } else {
      list_slots(h, true, 0, nullptr, g);
    }
  }
  return g.slots;
}

// One walk from b.lo: up to about `want` records into the sink (the first,
// at least, if any). True: the sink or b.hi stopped it. cut: records may
// have been left out before the end.
template <class Sink>
bool bytes_tree::batch(const bounds& b, size_t want, uint64_t root, uint64_t ts, Sink& sink, bool& cut) const {
  static thread_local std::vector<uintptr_t> t_space;
  const size_t cap = want + 2;  // a list holds at most want entries, the seed's leaf one more
  if (t_space.size() < 2 * cap) t_space.resize(2 * cap);
  walk_list now{t_space.data()}, next{t_space.data() + cap};
  now.want = next.want = want;
  const header* tight = nullptr;
  seed(b.lo, root, ts, now, tight);
  cut = now.cut;
  while (expand(now, next, ts)) {
    std::swap(now, next);
    cut |= now.cut;
  }
  cut |= next.cut;
  for (size_t i = 0; i < next.n; ++i) {
    header* h = reinterpret_cast<header*>(next.e[i] & ~uintptr_t{1});
    if (!visit_leaf(h, b, h == tight, b.has_hi, ts, sink)) return true;
  }
  return false;
}

// Walks until the sink or b.hi stops one or one reaches the end, all at one
// stamp; each next walk starts right after the last key read (out's last
// record), for next_want(want) records.
template <class Sink, class Next>
void bytes_tree::walks(bounds b, size_t want, Sink& sink, const record_buffer& out, Next next_want) {
  auto g = p_.pin();  // before the stamp: see versioned_ptr.hpp, reclamation
  uint64_t ts;
  const uint64_t root = snapshot_root(ts);
  if (!root) return;
  std::string after;
  for (;;) {
    const size_t before = out.size();
    bool cut = false;
    if (batch(b, want, root, ts, sink, cut) || !cut) return;
    if (out.size() == before) {  // nothing read: its guesses were too high, list more
      want *= 2;
      continue;
    }
    after.assign(out.key(out.size() - 1));
    after.push_back('\0');
    b.lo = after;
    want = next_want(want);
  }
}

// Scan and range bounds are not keys: any length (a bound past the longest
// key just sorts after it).
size_t bytes_tree::scan(std::string_view from, size_t count, record_buffer& out) {
  if (count == 0) return 0;
  const size_t n0 = out.size();
  auto sink = [&](std::string_view k, std::string_view v) {
    out.push_back(k, v);
    return out.size() - n0 < count;
  };
  walks({from, {}, false}, std::min(count, k_batch), sink, out,
        [&](size_t) { return std::min(count - (out.size() - n0), k_batch); });
  return out.size() - n0;
}

// A walk lists before it reads, so it cannot stop at hi: the first lists 16
// records, each next one twice as many while the range goes on.
size_t bytes_tree::range(std::string_view lo, std::string_view hi, record_buffer& out) {
  if (hi < lo) return 0;
  const size_t n0 = out.size();
  auto sink = [&](std::string_view k, std::string_view v) {
    out.push_back(k, v);
    return true;
  };
  walks({lo, hi, true}, 16, sink, out, [](size_t w) { return std::min(2 * w, k_batch); });
  return out.size() - n0;
}

}  // namespace pmindex::art::permart::detail

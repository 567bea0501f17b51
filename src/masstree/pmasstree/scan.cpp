// P-Masstree scans (see pmasstree.hpp): depth first through the layers,
// along each layer's leaf chain, every leaf one validated snapshot. No lock
// is taken; the walk runs pinned (kv blocks of records removed meanwhile
// stay readable).
#include <algorithm>

#include "masstree/pmasstree/pmasstree.hpp"

namespace pmindex::masstree::pmasstree {

using common::load_acq;

template <bool Bytes>
uint64_t tree<Bytes>::leaf_path::next(const tree& t) noexcept {
  uint64_t off;
  do off = step(t);
  while (off && off == last_);
  last_ = off;
  return off;
}

template <bool Bytes>
uint64_t tree<Bytes>::leaf_path::step(const tree& t) noexcept {
  if (depth_ > k_max) return 0;
  unsigned d = depth_;  // the deepest node with a child right of the one taken
  while (d && pos_[d - 1] >= std::min<uint64_t>(node_[d - 1]->nkeys, k_width)) --d;
  if (!d) {
    depth_ = 0;  // the layer's last leaf was named
    return 0;
  }
  uint64_t off = load_acq(&node_[d - 1]->child[++pos_[d - 1]]);
  for (; d < depth_; ++d) {  // down its leftmost path to the leaves' depth
    // (a damaged pool's child words may break the leaves' common depth:
    // a hint names no inner node as one)
    if (kind_of(t.at<void>(off)) != k_inner) {
      depth_ = 0;
      return 0;
    }
    node_[d] = t.at<inner>(off);
    pos_[d] = 0;
    off = load_acq(&node_[d]->child[0]);
  }
  return off;
}

template <bool Bytes>
std::vector<uint64_t> tree<Bytes>::named_leaves(ikey k) {
  auto g = p_.pin();
  leaf_path path;
  std::vector<uint64_t> out{descend(load_acq(&root_->root), k, &path)};
  while (const uint64_t off = path.next(*this)) out.push_back(off);
  return out;
}

// Calls sink(slice, word) for every record of the layer >= from (nullptr:
// all), in key order; false from the sink stops the walk (returns false).
// keys=u64: word is the value; keys=bytes: the record's kv block.
//
// Each leaf's `next` is in the leaf before it, so the chain alone takes
// one leaf's misses at a time. The inner nodes the descent passed name the
// leaves that follow (leaf_path): the scan asks for up to k_ahead of them
// beyond the one it reads, while they likely hold records it will take
// (at the mean fill of the leaves read so far). The chain stays the truth:
// a hint only picks what to prefetch, and the hint sequence is checked
// against the chain as the scan moves (a leaf only the chain holds is read
// without one; the hints go on after it).
template <bool Bytes>
template <class Sink>
bool tree<Bytes>::scan_layer(uint64_t root, size_t d, const probe* from, size_t expect, Sink& sink) {
  constexpr unsigned k_ahead = 4, k_listed = 16, k_ring = 32;  // k_ring > k_listed + k_ahead + 1
  const ikey lo = from ? from->at(d) : 0;
  leaf_path path;
  const uint64_t first = descend(root, lo, &path);
  prefetch_leaf(first);
  uint64_t hint[k_ring];  // hint[i % k_ring]: the i-th leaf named after `first`
  unsigned known = 0;     // hints listed
  unsigned ahead = 0;     // hints asked for (prefetched)
  unsigned j = 0;         // hints the chain has reached
  const size_t half = std::max(1u, leaf_cap_ / 2);
  for (const size_t want = std::min<size_t>(k_listed, expect / half + 1); known < want; ++known)
    if (!(hint[known] = path.next(*this))) break;
  while (ahead < k_ahead && ahead < known) prefetch_leaf(hint[ahead++]);
  auto ask = [&] {
    if (ahead == known) {  // a long scan: name one more
      if (!(hint[known % k_ring] = path.next(*this))) return;
      ++known;
    }
    prefetch_leaf(hint[ahead++ % k_ring]);
  };

  uint64_t v;
  const leaf* l = settle(at(first), lo, v);
  bool have_last = false;
  ikey last = 0;
  struct ent {
    ikey k;
    uint64_t w;
  } buf[2][k_width];      // a leaf's snapshot; keys=bytes, the previous leaf's too
  size_t taken = 0;       // entries given to the sink
  auto emit = [&](const ent* b, unsigned n) {
    for (unsigned i = 0; i < n; ++i) {
      const ent e = b[i];
      // A leaf split after the previous leaf's snapshot: skip what it gave.
      if ((have_last && e.k <= last) || e.k < lo) continue;
      have_last = true;
      last = e.k;
      const bool at_from = from && e.k == lo;
      ++taken;
      if constexpr (Bytes) {
        if (class_of(e.k) == k_more) {
          if (e.w & k_layer_tag) {
            const size_t rest = expect > taken ? expect - taken + 1 : 1;
            if (!scan_layer(e.w & ~k_layer_tag, d + 1, at_from ? from : nullptr, rest, sink)) return false;
            continue;
          }
          if (at_from && common::kv_key(p_, e.w) < from->s) continue;  // a suffix entry below `from`
        }
      }
      if (!sink(slice_of(e.k), e.w)) return false;
    }
    return true;
  };
  unsigned held = 0;  // keys=bytes: entries of the previous leaf, not yet emitted
  uint64_t live = 0;  // entries of the leaves read so far
  for (unsigned r = 1;; ++r) {  // r: leaves read
    ent* const cur = buf[r & 1];
    unsigned n;
    uint64_t nx;
    for (;;) {  // the leaf's visible entries, as one snapshot
      v = read_begin(l);
      perm_t pm{load_acq(&l->perm)};
      nx = load_acq(&l->next);
      // visible() in the same pass: entries >= next's low are not l's
      const unsigned cnt = std::min(pm.size(), k_width);
      const ikey hi = nx ? low_of(at(nx)) : ~ikey{0};
      for (n = 0; n < cnt; ++n) {
        const unsigned sl = pm[n];
        const ikey k = slot_key(l, sl);
        if (k >= hi) break;
        cur[n] = {k, load_acq(&l->slot[sl].value)};
      }
      if (validate(l, v)) break;
    }
    live += n;
    if (nx) {
      if (j < known && hint[j % k_ring] == nx) {
        if (j++ >= ahead) prefetch_leaf(nx), ++ahead;  // named, not yet asked for
      } else if (taken + held < expect) {
        prefetch_leaf(nx);  // a leaf the hints do not name
      }
      while (ahead < j + k_ahead && taken + held + n + (ahead - j) * live / r < expect) {
        const unsigned before = ahead;
        ask();
        if (ahead == before) break;
      }
    }
    if constexpr (Bytes) {
      // The sink reads each record's block: a miss per record. The blocks
      // of this leaf are asked for before the previous leaf's records are
      // emitted, so that they arrive while those are read (asked for just
      // before their own records, the first of each leaf waited a whole
      // miss: the byte scan100 ran at 0.7x).
      if (taken + held < expect)
        for (unsigned i = 0; i < n; ++i)
          if (!(cur[i].w & k_layer_tag)) __builtin_prefetch(common::kv_at(p_, cur[i].w));
      if (held && !emit(buf[(r - 1) & 1], held)) return false;
      held = 0;
      if (nx && taken + n < expect) {  // emitted after the next leaf's blocks are asked for
        held = n;
        l = at(nx);
        continue;
      }
    }
    if (!emit(cur, n)) return false;
    if (!nx) return true;
    l = at(nx);
  }
}

template <bool Bytes>
size_t tree<Bytes>::scan(uint64_t from, size_t count, record* out) {
  if constexpr (Bytes) {
    return bytes_index::scan(from, count, out);
  } else {
    if (!count) return 0;
    size_t n = 0;
    auto sink = [&](uint64_t k, uint64_t w) {
      out[n++] = {k, w};
      return n < count;
    };
    walk(probe{from, {}}, count, sink);
    return n;
  }
}

template <bool Bytes>
size_t tree<Bytes>::range(uint64_t lo, uint64_t hi, std::vector<record>& out) {
  if constexpr (Bytes) {
    return bytes_index::range(lo, hi, out);
  } else {
    size_t n = 0;
    if (lo > hi) return 0;
    auto sink = [&](uint64_t k, uint64_t w) {
      if (k > hi) return false;
      out.push_back({k, w});
      ++n;
      return true;
    };
    walk(probe{lo, {}}, SIZE_MAX, sink);
    return n;
  }
}

template <bool Bytes>
size_t tree<Bytes>::scan(std::string_view from, size_t count, record_buffer& out) {
  if constexpr (!Bytes) {
    if (!count) return 0;
    uint64_t k;
    if (!u64_at_or_after(from, k)) return 0;
    size_t n = 0;
    auto sink = [&](uint64_t key, uint64_t w) {
      out.push_back(key_bytes(key), value_bytes(w));
      return ++n < count;
    };
    walk(probe{k, {}}, count, sink);
    return n;
  } else {
    if (!count) return 0;
    size_t n = 0;
    auto sink = [&](uint64_t, uint64_t kv) {
      auto* b = common::kv_at(p_, kv);
      out.push_back(common::kv_key(b), common::kv_value(b));
      return ++n < count;
    };
    walk(probe{0, from}, count, sink);
    return n;
  }
}

template <bool Bytes>
size_t tree<Bytes>::range(std::string_view lo, std::string_view hi, record_buffer& out) {
  if constexpr (!Bytes) {
    return index::range(lo, hi, out);
  } else {
    size_t n = 0;
    if (lo > hi) return 0;
    auto sink = [&](uint64_t, uint64_t kv) {
      auto* b = common::kv_at(p_, kv);
      if (common::kv_key(b) > hi) return false;
      out.push_back(common::kv_key(b), common::kv_value(b));
      ++n;
      return true;
    };
    walk(probe{0, lo}, SIZE_MAX, sink);
    return n;
  }
}

template class tree<false>;
template class tree<true>;

}  // namespace pmindex::masstree::pmasstree

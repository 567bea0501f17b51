// Walks of the byte-key WORT-family tree (included by bytes_tree.hpp): the
// in-order walk of check, trace and stats, one loop with an explicit stack,
// since a tree of keys up to 4096 bytes can be thousands of nodes deep
// (recursion could overflow a thread's stack); and the scans', level by
// level, with writers excluded (the writer gate closed, shared): scan() and
// range() are atomic snapshots.
#pragma once

namespace pmindex::art::detail {

// Visits the subtree of child word w (found at position 0) in key order:
//   enter(w, pos, d, bounded, frame) when a node is reached below digit d
//     (k_no_digit for w itself); it must set frame.b (and may set
//     frame.next / frame.bound); false skips the node's subtree;
//   leaf(lw, pos, d, bounded) for every leaf, with d = k_end for an
//     end-of-key leaf (pos is then its node's branch position, else the
//     position below the digit); true stops the walk;
//   leave(frame) after a node's entries.
// `bounded` is passed down as the caller's flag for w, then true only for
// the child at frame.bound. Returns true if leaf() stopped the walk. Walks do
// not nest (one stack per thread).
template <class P>
template <class Enter, class Leaf, class Leave>
bool art_bytes_index<P>::walk(uint64_t w, bool bounded, Enter&& enter, Leaf&& leaf, Leave&& leave) {
  if (!w) return false;
  if (is_leaf(w)) return leaf(w, 0u, k_no_digit, bounded);
  static thread_local std::vector<walk_frame> t_stack;
  std::vector<walk_frame>& st = t_stack;
  st.clear();
  walk_frame f{w, 0, 0, -1, -1};
  if (!enter(w, 0u, k_no_digit, bounded, f)) return false;
  prefetch_children(f);
  st.push_back(f);
  while (!st.empty()) {
    walk_frame& t = st.back();
    if (t.next < 0) {
      t.next = 0;
      uint64_t e = load_eok(t.w);
      if (e && leaf(e, t.b, k_end, false)) return true;
      continue;
    }
    uint64_t* s = nullptr;
    int d = t.next >= int(dg::k_fanout)
                ? -1
                : visit(t.w, [&](auto ops, auto* n) { return ops.next(n, unsigned(t.next), &s); });
    if (d < 0) {
      leave(t);
      st.pop_back();
      continue;
    }
    t.next = d + 1;
    uint64_t c = __atomic_load_n(s, __ATOMIC_ACQUIRE);
    bool cb = d == t.bound;
    unsigned pos = t.b + 1;
    if (is_leaf(c)) {
      if (leaf(c, pos, unsigned(d), cb)) return true;
      continue;
    }
    walk_frame g{c, pos, 0, -1, -1};
    if (enter(c, pos, unsigned(d), cb, g)) prefetch_children(g), st.push_back(g);  // (t is not used after this)
  }
  return false;
}

// Asks for the first children a walk entering node f.w will read, all at
// once: each is a block of its own (a leaf: one record), and read one after
// another they are one miss after another (perf: most of a scan). A hint.
template <class P>
void art_bytes_index<P>::prefetch_children(const walk_frame& f) {
  unsigned from = f.next < 0 ? 0 : unsigned(f.next), ahead = 16;
  visit(f.w, [&](auto ops, auto* n) {
    return ops.for_each(n, [&](unsigned d, uint64_t* s) {
      if (d < from) return false;
      __builtin_prefetch(p_.template ptr<char>(off_of(__atomic_load_n(s, __ATOMIC_RELAXED))));
      return --ahead == 0;
    });
  });
}

// ---------------------------------------------------------------- scans
// Level by level, as tree.hpp's u64 scans (the depth-first walk above
// waited on each node below the ones it could ask for ahead: a byte scan100
// ran at a quarter of the u64 one). A node's end-of-key leaf sorts before its
// children, so a node is replaced in a list by that leaf, then its children.

// The words right of the path to `from` into f in key order: deepest first.
// One loop down the path, then the levels back up (a path of a 4096-byte
// key is thousands of nodes: no recursion).
template <class P>
void art_bytes_index<P>::seed(std::string_view from, walk_list& f) {
  struct step {
    uint64_t w;
    unsigned d;  // the digit taken
  };
  static thread_local std::vector<step> t_path;
  std::vector<step>& path = t_path;
  path.clear();
  const unsigned lf = dg::length(from);
  uint64_t w = __atomic_load_n(&root_->child, __ATOMIC_ACQUIRE);
  for (unsigned pos = 0; w;) {
    if (is_leaf(w)) {
      if (leaf_key(w) >= from) listed(w, f);
      break;
    }
    const header h = hdr(w);
    const unsigned b = pos + h.plen;
    if (h.plen) {
      const unsigned j = prefix_diff(w, h, from);
      if (j < b) {
        // `from` ends inside the prefix (the whole subtree sorts after it),
        // or leaves it with a smaller digit (after) or a larger one (before).
        if (j == lf || prefix_digit(w, h, j) > dg::at(from, j)) listed(w, f);
        break;
      }
    }
    // The path equals `from` up to the branch position. If `from` ends
    // there, the end-of-key leaf is `from` itself and every child sorts
    // after it: the whole node. Otherwise the end-of-key leaf sorts below.
    if (lf <= b) {
      listed(w, f);
      break;
    }
    const unsigned d = dg::at(from, b);
    path.push_back({w, d});
    const uint64_t* s = find(w, d);
    w = s ? __atomic_load_n(s, __ATOMIC_ACQUIRE) : 0;
    pos = b + 1;
  }
  for (size_t i = path.size(); i-- > 0;) {
    const step st = path[i];
    if (st.d + 1 >= dg::k_fanout) continue;
    if (f.full()) {
      f.cut = true;  // (perhaps nothing was left: a walk again finds that)
      return;
    }
    const bool stopped = visit(st.w, [&](auto ops, auto* n) {
      return ops.for_each(
          n,
          [&](unsigned, uint64_t* slot) {
            if (f.full()) return f.cut = true;
            listed(__atomic_load_n(slot, __ATOMIC_ACQUIRE), f);
            return false;
          },
          st.d + 1);
    });
    if (stopped) return;
  }
}

// One walk: up to `want` records (the first, at least, if any) with keys
// >= from into sink(key, value), which returns true to stop (so does
// batch). cut: records may have been left out before the end.
template <class P>
template <class Sink>
bool art_bytes_index<P>::batch(std::string_view from, size_t want, Sink& sink, bool& cut) {
  static thread_local std::vector<uint64_t> t_space;
  const size_t cap = want + 2;  // a list holds at most want entries, the seed's first one more
  if (t_space.size() < 2 * cap) t_space.resize(2 * cap);
  walk_list now{t_space.data()}, next{t_space.data() + cap};
  now.want = next.want = want;
  seed(from, now);
  cut = now.cut;
  while (expand(now, next)) {
    std::swap(now, next);
    cut |= now.cut;
  }
  cut |= next.cut;
  for (size_t i = 0; i < next.n; ++i)
    if (sink(leaf_key(next.w[i]), leaf_value(next.w[i]))) return true;
  return false;
}

// Walks from `from` until the sink stops or a walk reaches the end; each
// next walk starts right after the last key read, for next_want(want)
// records. The caller closes the writer gate: the words stay meanwhile.
template <class P>
template <class Sink, class Next>
void art_bytes_index<P>::walks(std::string_view from, size_t want, Sink& sink, Next next_want) {
  std::string after;  // the key right after the last one read: it and a 0 byte
  std::string_view last;
  bool any = false;
  auto noted = [&](std::string_view k, std::string_view v) {
    last = k, any = true;
    return sink(k, v);
  };
  for (;;) {
    bool cut = false;
    any = false;
    if (batch(from, want, noted, cut) || !cut) return;
    if (!any) {  // nothing read (cannot happen in a sound tree): list more
      want *= 2;
      continue;
    }
    after.assign(last);
    after.push_back('\0');
    from = after;
    want = next_want(want);
  }
}

template <class P>
size_t art_bytes_index<P>::scan(std::string_view from, size_t count, record_buffer& out) {
  if (!count) return 0;
  common::writer_gate::shared_closed no_writers(gate_);  // an atomic snapshot
  size_t n = 0;
  auto sink = [&](std::string_view k, std::string_view v) {
    out.push_back(k, v);
    return ++n == count;
  };
  walks(from, std::min(count, k_batch), sink, [&](size_t) { return std::min(count - n, k_batch); });
  return n;
}

// A walk lists before it reads, so it cannot stop at hi: the first lists
// 16 records, each next one twice as many while the range goes on.
template <class P>
size_t art_bytes_index<P>::range(std::string_view lo, std::string_view hi, record_buffer& out) {
  if (hi < lo) return 0;
  common::writer_gate::shared_closed no_writers(gate_);  // an atomic snapshot
  size_t n = 0;
  auto sink = [&](std::string_view k, std::string_view v) {
    if (k > hi) return true;
    out.push_back(k, v);
    ++n;
    return false;
  };
  walks(lo, 16, sink, [](size_t w) { return std::min(2 * w, k_batch); });
  return n;
}

}  // namespace pmindex::art::detail

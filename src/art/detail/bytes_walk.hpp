// In-order walks of the byte-key WORT-family tree (included by
// bytes_tree.hpp): one loop with an explicit stack, since a tree of keys up
// to 4096 bytes can be thousands of nodes deep (recursion could overflow a
// thread's stack). scan() and range() are walks from a start key with
// writers excluded (the writer gate closed, shared): both are atomic snapshots.
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

// Every record with key >= from in key order into sink(key, value), which
// returns true to stop. While a node is `bounded` the path to it equals the
// digits of `from`, so what sorts below `from` is skipped.
template <class P>
template <class Sink>
void art_bytes_index<P>::scan_from(std::string_view from, Sink& sink) {
  const unsigned lf = dg::length(from);
  auto enter = [&](uint64_t w, unsigned pos, unsigned, bool bounded, walk_frame& f) {
    header h = hdr(w);
    f.b = pos + h.plen;
    if (!bounded) return true;
    if (h.plen) {
      unsigned j = prefix_diff(w, h, from);
      if (j < f.b) {
        if (j == lf) return true;  // `from` ends inside the prefix: all of the subtree sorts after it
        return prefix_digit(w, h, j) > dg::at(from, j);  // all below `from` (skip), or all after it
      }
    }
    // The path equals `from` up to the branch position. If `from` ends there
    // the end-of-key leaf is `from` itself and every child sorts after it;
    // otherwise the end-of-key leaf sorts below it and so do smaller digits.
    if (lf > f.b) f.next = f.bound = int(dg::at(from, f.b));
    return true;
  };
  auto leaf = [&](uint64_t lw, unsigned, unsigned, bool bounded) {
    std::string_view k = leaf_key(lw);
    if (bounded && k < from) return false;
    return bool(sink(k, leaf_value(lw)));
  };
  walk(__atomic_load_n(&root_->child, __ATOMIC_ACQUIRE), true, enter, leaf, [](walk_frame&) {});
}

template <class P>
size_t art_bytes_index<P>::scan(std::string_view from, size_t count, record_buffer& out) {
  if (!count) return 0;
  common::writer_gate::shared_closed no_writers(gate_);
  size_t n = 0;
  auto sink = [&](std::string_view k, std::string_view v) {
    out.push_back(k, v);
    return ++n == count;
  };
  scan_from(from, sink);
  return n;
}

template <class P>
size_t art_bytes_index<P>::range(std::string_view lo, std::string_view hi, record_buffer& out) {
  if (hi < lo) return 0;
  common::writer_gate::shared_closed no_writers(gate_);
  size_t n0 = out.size();
  auto sink = [&](std::string_view k, std::string_view v) {
    if (k > hi) return true;
    out.push_back(k, v);
    return false;
  };
  scan_from(lo, sink);
  return out.size() - n0;
}

}  // namespace pmindex::art::detail

// The node kinds of one WORT-family tree, reached through tagged child words,
// and the node-level changes both key layouts share (keys=u64: tree.hpp,
// keys=bytes: bytes_tree.hpp). Each change ends in ONE failure-atomic commit
// store after everything it publishes is durable; see tree_write.hpp for the
// protocols.
//
// `Eok` is the byte layout: every node has one more word, the END-OF-KEY
// entry, at ops::k_eok (node4: in its pad; the others: right after the
// node). It holds the leaf whose key ends exactly at the node's branch
// position (so a key may be a proper prefix of another); it is set and
// cleared with one 8-byte store. Iterations present it first, as the
// pseudo-digit k_end (a key that ends sorts before its extensions).
#pragma once

#include <atomic>
#include <cstdint>

#include "art/detail/layout.hpp"
#include "art/detail/node16.hpp"
#include "art/detail/node4.hpp"
#include "art/detail/node48.hpp"
#include "art/detail/node_direct.hpp"
#include "common/prefetch.hpp"
#include "pmindex/error.hpp"
#include "pmindex/index.hpp"
#include "pmindex/pm/pool.hpp"

namespace pmindex::art::detail {

// The pseudo-digit of the end-of-key entry (above every real digit).
inline constexpr unsigned k_end = 0x10000;

// Crash-checker self-tests (params "mutant=NAME", test builds only; WOART's
// entry lists them in this order), each caught by `pmindex crashtest`:
//   - an in-place u64 insert that makes its commit durable before the child
//     word, i.e. two fields changed non-atomically, in Node4 (meta word),
//     Node16 (bitmap) or Node48 (index byte);
//   - keys=bytes: a new leaf's kv block published without being flushed.
enum class mutant : unsigned {
  none,
  node4_child_after_meta,
  node16_bitmap_before_child,
  node48_index_before_child,
  bytes_leaf_unflushed,
};

// Test hook (builds with PMINDEX_MUTANTS): while positive, a WORT/WOART
// prefix split stops after the node header store, before the parent pointer
// swing, and decrements it: exactly the state a crash there leaves.
inline std::atomic<int> g_stop_split_after_header{0};

// Blocks allocated by one insert; freed again if the insert fails (pool
// full) before anything was published.
class pending_blocks {
 public:
  explicit pending_blocks(pm::pool& p) : p_(p) {}
  ~pending_blocks() {
    if (!done_)
      for (unsigned i = 0; i < n_; ++i) p_.free(off_[i]);
  }
  uint64_t alloc(uint64_t size) {
    uint64_t o = p_.alloc_or_throw(size);
    off_[n_++] = o;
    return o;
  }
  void commit() { done_ = true; }

 private:
  pm::pool& p_;
  uint64_t off_[4];
  unsigned n_ = 0;
  bool done_ = false;
};

// One step of a root-to-leaf path: the node, where it hangs, the digit taken.
struct path_step {
  uint64_t* slot;
  uint64_t w;
  unsigned d;  // k_end: the end-of-key entry
};

// A level of a scan's breadth-first walk (tree.hpp, bytes_walk.hpp): child
// words in key order, and the records counted on below them.
struct walk_list {
  uint64_t* w;
  size_t n = 0, guessed = 0, want = 0;
  bool cut = false;  // a word was left out
  bool full() const { return guessed >= want; }
};

template <class P, bool Eok>
class node_kit {
 public:
  using direct = direct_ops<(1u << P::k_span)>;

  explicit node_kit(pm::pool& p) : p_(p) {}

 protected:
  template <class F>
  decltype(auto) visit(uint64_t w, F&& f) {
    char* b = p_.ptr<char>(off_of(w));
    if constexpr (P::k_adaptive) {
      switch (kind_of(w)) {
        case k_n4:
          return f(node4_ops{}, reinterpret_cast<node4*>(b));
        case k_n16:
          return f(node16_ops{}, reinterpret_cast<node16*>(b));
        case k_n48:
          return f(node48_ops{}, reinterpret_cast<node48*>(b));
        default:
          break;
      }
    }
    PMINDEX_ASSERT(kind_of(w) == k_direct);
    return f(direct{}, reinterpret_cast<typename direct::node*>(b));
  }
  static bool kind_valid(kind k) {
    return k == k_direct || (P::k_adaptive && (k == k_n4 || k == k_n16 || k == k_n48));
  }
  static uint64_t eok_offset(kind k) {
    switch (k) {
      case k_n4:
        return node4_ops::k_eok;
      case k_n16:
        return node16_ops::k_eok;
      case k_n48:
        return node48_ops::k_eok;
      default:
        return direct::k_eok;
    }
  }
  // The block size of a node (with the end-of-key word in the byte layout).
  static uint64_t node_size(kind k) {
    uint64_t s = k == k_n4    ? node4_ops::k_size
                 : k == k_n16 ? node16_ops::k_size
                 : k == k_n48 ? node48_ops::k_size
                              : direct::k_size;
    if constexpr (Eok) return eok_offset(k) + 8 > s ? eok_offset(k) + 8 : s;
    return s;
  }
  // Records a walk counts on below word k: a leaf's one, a node's fewest
  // children for its kind (a node holds at least 2 records; in the byte
  // layout an end-of-key leaf counts as one of them). Nodes never shrink to a
  // smaller kind, so after removes a node may hold fewer (the walk is then
  // cut short and the scan walks again). Fewest measured 1.04x typical
  // counts (Node16 10, Node48 24, Node256 64) at 1M.
  static size_t fewest_records(uint64_t k) {
    switch (kind_of(k)) {
      case k_leaf: return 1;
      case k_n4: return 2;
      case k_n16: return 5;
      case k_n48: return 17;
      default: return (1u << P::k_span) >= 256 ? 49 : 2;
    }
  }
  uint64_t* header_word(uint64_t w) { return p_.ptr<uint64_t>(off_of(w)); }
  uint64_t* eok(uint64_t w) {
    static_assert(Eok);
    return p_.ptr<uint64_t>(off_of(w) + eok_offset(kind_of(w)));
  }
  uint64_t load_eok(uint64_t w) {
    if constexpr (Eok) return __atomic_load_n(eok(w), __ATOMIC_ACQUIRE);
    return 0;
  }
  uint64_t* find(uint64_t w, unsigned d) {
    return visit(w, [&](auto ops, auto* n) { return ops.find(n, d); });
  }
  // The slot of entry d (k_end: the end-of-key word), or null.
  uint64_t* entry(uint64_t w, unsigned d) {
    if constexpr (Eok)
      if (d == k_end) return eok(w);
    return find(w, d);
  }
  // Entries: children, and the end-of-key leaf.
  unsigned count(uint64_t w) {
    return visit(w, [&](auto ops, auto* n) { return ops.count(n); }) + (load_eok(w) != 0);
  }
  // Every entry in key order (the end-of-key one first, as k_end); f(d,
  // slot) returns true to stop.
  template <class F>
  bool for_each_entry(uint64_t w, F&& f) {
    if constexpr (Eok)
      if (load_eok(w) && f(k_end, eok(w))) return true;
    return visit(w, [&](auto ops, auto* n) { return ops.for_each(n, f); });
  }
  // The smallest / largest leaf word below a child word (0 if none; beside
  // writers also when a word was cleared under the walk: the caller restarts).
  uint64_t min_leaf_word(uint64_t w) {
    while (w && !is_leaf(w)) {
      uint64_t next = 0;
      for_each_entry(w, [&](unsigned, uint64_t* s) { return (next = __atomic_load_n(s, __ATOMIC_ACQUIRE)), true; });
      w = next;
    }
    return w;
  }
  // A node word from a pool that may be damaged is followed only when its
  // block is allocated, of its kind's size, and its contents validate.
  bool node_ok(uint64_t w) {
    uint64_t off = off_of(w);
    return p_.is_allocated(off) && kind_valid(kind_of(w)) && off % 64 == 0 &&
           p_.block_size(off) >= node_size(kind_of(w)) &&
           !visit(w, [&](auto ops, auto* nd) { return ops.validate(nd); });
  }
  // min_leaf_word for a walk that must not trust the pool (check(); a
  // writer's second look with every writer shut out): each node checked,
  // at most `steps` nodes; 0 if a word is bad or no leaf is below. The
  // leaf's block is allocated; its contents are the caller's to check.
  uint64_t checked_min_leaf_word(uint64_t w, unsigned steps) {
    for (unsigned i = 0; w && !is_leaf(w); ++i) {
      if (i == steps || !node_ok(w)) return 0;
      uint64_t next = 0;
      for_each_entry(w, [&](unsigned, uint64_t* s) { return (next = *s), true; });
      w = next;
    }
    return w && p_.is_allocated(off_of(w)) ? w : 0;
  }
  uint64_t max_leaf_word(uint64_t w) {
    while (w && !is_leaf(w)) {
      uint64_t next = 0;
      for_each_entry(w, [&](unsigned, uint64_t* s) { return (next = *s), false; });
      w = next;
    }
    return w;
  }

  // --- scans (tree.hpp, bytes_walk.hpp): level by level
  // Appends found word k to list f and asks for its lines: a leaf's (u64)
  // or its kv block's first (bytes); a node's, but a Node256's first three
  // (a Node256 is seldom read whole by one scan) and then its end-of-key
  // word (bytes), which an expansion reads first.
  [[gnu::always_inline]] inline void listed(uint64_t k, walk_list& f) {
    char* b = p_.ptr<char>(off_of(k));
    if (is_leaf(k)) {
      __builtin_prefetch(b);
    } else {
      const uint64_t z = node_size(kind_of(k));
      common::prefetch_lines(b, z <= 1024 ? z : 192);
      if constexpr (Eok)
        if (z > 1024) __builtin_prefetch(eok(k));
    }
    f.w[f.n++] = k;
    f.guessed += fewest_records(k);
  }
  // One level: g is f with each node word replaced by its end-of-key leaf
  // (bytes) and its children, up to g's guessed fill. True: g holds node
  // words.
  bool expand(const walk_list& f, walk_list& g) {
    g.n = g.guessed = 0;
    g.cut = false;
    bool inner = false;
    for (size_t i = 0; i < f.n; ++i) {
      const uint64_t w = f.w[i];
      if (g.full()) {
        g.cut = true;
        break;
      }
      if (is_leaf(w)) {
        g.w[g.n++] = w, ++g.guessed;
        continue;
      }
      if constexpr (Eok)
        if (const uint64_t e = load_eok(w)) listed(e, g);
      visit(w, [&](auto ops, auto* n) {
        return ops.for_each(n, [&](unsigned, uint64_t* slot) {
          if (g.full()) return g.cut = true;
          const uint64_t k = __atomic_load_n(slot, __ATOMIC_ACQUIRE);
          listed(k, g);
          inner |= !is_leaf(k);
          return false;
        });
      });
    }
    return inner;
  }

  // --- building (the writer holds the locks of the nodes it changes)
  uint64_t new_node(pending_blocks& pb, kind k, uint64_t hdr_word) {
    uint64_t w = tag(pb.alloc(node_size(k)), k);
    visit(w, [&](auto ops, auto* n) { ops.init(n, hdr_word); });
    if constexpr (Eok) *eok(w) = 0;
    return w;
  }
  // Adds an entry to an unpublished node (d: a digit or k_end).
  void fresh_place(uint64_t w, unsigned d, uint64_t child) {
    if constexpr (Eok)
      if (d == k_end) return void(*eok(w) = child);
    visit(w, [&](auto ops, auto* n) { ops.fresh_add(n, d, child); });
  }
  // A fresh (unpublished, unflushed) node of kind `to` with w's entries,
  // minus `skip_digit` and plus (add_digit -> add_child) when those are >= 0.
  uint64_t copy_node(pending_blocks& pb, uint64_t w, kind to, uint64_t hdr_word, int add_digit,
                     uint64_t add_child, int skip_digit) {
    uint64_t c = new_node(pb, to, hdr_word);
    visit(c, [&](auto cops, auto* cn) {
      visit(w, [&](auto ops, auto* n) {
        ops.for_each(n, [&](unsigned d, uint64_t* s) {
          if (int(d) != skip_digit) cops.fresh_add(cn, d, *s);
          return false;
        });
      });
      if (add_digit >= 0) cops.fresh_add(cn, unsigned(add_digit), add_child);
    });
    if constexpr (Eok) *eok(c) = *eok(w);
    return c;
  }
  void flush_node(uint64_t w) { p_.flush(p_.ptr(off_of(w)), node_size(kind_of(w))); }

  // --- commits (the writer holds the lock of each node whose word it
  // stores, node_locks.hpp; the new leaf lw is written and flushed by the
  // caller, not fenced)

  // An empty slot (a child word or an end-of-key word) gets the leaf.
  void publish_leaf(uint64_t* slot, uint64_t lw) {
    p_.fence();                  // the leaf durable before it is published
    p_.store_persist(slot, lw);  // commit
  }
  // A slot holding a leaf gets a new node {a: da, b: db} (the old and the new leaf).
  void publish_pair(pending_blocks& pb, uint64_t* slot, uint64_t hdr_word, unsigned da, uint64_t a,
                    unsigned db, uint64_t b) {
    uint64_t nw = new_node(pb, P::k_adaptive ? k_n4 : k_direct, hdr_word);
    fresh_place(nw, da, a);
    fresh_place(nw, db, b);
    flush_node(nw);
    p_.fence();                  // the new subtree durable before it is published
    p_.store_persist(slot, nw);  // commit
  }
  // Node w (under `slot`) gets the child (d -> lw), in place, or by a copy
  // (the next kind when full; ART+CoW: every Node4/16 change).
  void add_child(pending_blocks& pb, uint64_t* slot, uint64_t w, unsigned d, uint64_t lw) {
    kind k = kind_of(w);
    bool full = visit(w, [&](auto ops, auto* n) { return ops.full(n); });
    bool cow = P::k_cow_small && (k == k_n4 || k == k_n16);
    if (!full && !cow) {
      visit(w, [&](auto ops, auto* n) { ops.add(p_, n, d, lw); });
      return;
    }
    kind to = !full ? k : k == k_n4 ? k_n16 : k == k_n16 ? k_n48 : k_direct;
    uint64_t c = copy_node(pb, w, to, *header_word(w), int(d), lw, -1);
    flush_node(c);
    p_.fence();                 // the copy and the leaf durable before the swing
    p_.store_persist(slot, c);  // commit
    p_.retire(off_of(w));
  }
  // Prefix split of node w (under `slot`): a new parent with header m_hdr
  // gets {ref_digit: w, key_digit: the new leaf}; w's header becomes
  // lower_hdr. WORT/WOART: header store, then the swing (recovery repairs a
  // crash between them); ART+CoW: w is copied with lower_hdr instead.
  void split(pending_blocks& pb, uint64_t* slot, uint64_t w, uint64_t m_hdr, uint64_t lower_hdr,
             unsigned ref_digit, unsigned key_digit, uint64_t lw) {
    uint64_t m = new_node(pb, P::k_adaptive ? k_n4 : k_direct, m_hdr);
    uint64_t child = w;
    if constexpr (P::k_cow_split) {
      child = copy_node(pb, w, kind_of(w), lower_hdr, -1, 0, -1);
      flush_node(child);
    }
    fresh_place(m, ref_digit, child);
    fresh_place(m, key_digit, lw);
    flush_node(m);
    p_.fence();  // the new parent (and copy) durable before anything points to it
    if constexpr (!P::k_cow_split) {
      // One atomic header store. From here until the swing is durable a
      // crash leaves w under `slot` with a depth below its position
      // (repaired by recovery).
      p_.store_persist(header_word(w), lower_hdr);
#ifdef PMINDEX_MUTANTS
      if (g_stop_split_after_header.load() > 0) {
        g_stop_split_after_header.fetch_sub(1);
        pb.commit();  // the crash leaves them allocated; tracing reclaims them
        return;
      }
#endif
    }
    p_.store_persist(slot, m);  // commit
    if constexpr (P::k_cow_split) p_.retire(off_of(w));
  }
  // Where the remove of the leaf at the end of `path` (depth steps below the
  // root slot) commits: the lowest node on the path that keeps another
  // entry (-1: none; the root word is cleared). *swings: that node's own
  // slot is swung (the node replaced by its last leaf, or by a copy) rather
  // than the node changed in place. The nodes below it are unlinked.
  int unlink_top(const path_step* path, int depth, bool* swings) {
    int i = depth - 1;
    while (i >= 0 && count(path[i].w) == 1) --i;
    if (i < 0) return *swings = true, i;
    kind k = kind_of(path[i].w);
    *swings = last_leaf(path[i]) || (path[i].d != k_end && P::k_cow_small && (k == k_n4 || k == k_n16));
    return i;
  }
  // Removes that leaf lw, committing at path[top] (unlink_top): the entry
  // goes with one commit; when the node would keep a single leaf, its slot
  // is swung to that leaf instead. Every block unlinked is retired after the
  // commit. (Threads: the writer holds the locks of path[top..depth) and,
  // when it swings, of the word above path[top].)
  void unlink(uint64_t* root_slot, const path_step* path, int depth, int top, uint64_t lw) {
    int first_dead = top + 1;
    if (top < 0) {
      p_.store_persist(root_slot, 0);  // commit: the tree is empty
    } else {
      const path_step& st = path[top];
      if (uint64_t other = last_leaf(st)) {
        p_.store_persist(st.slot, other);  // commit: the node is replaced by its last leaf
        first_dead = top;
      } else {
        remove_entry(st.slot, st.w, st.d);
      }
    }
    for (int j = first_dead; j < depth; ++j) p_.retire(off_of(path[j].w));
    p_.retire(off_of(lw));
  }
  // The other entry of st.w if it has two and that one is a leaf, else 0.
  uint64_t last_leaf(const path_step& st) {
    uint64_t other = 0;
    if (count(st.w) == 2)
      for_each_entry(st.w, [&](unsigned d, uint64_t* s) { return d != st.d ? (other = *s, true) : false; });
    return is_leaf(other) ? other : 0;
  }
  void remove_entry(uint64_t* slot, uint64_t w, unsigned d) {
    if constexpr (Eok)
      if (d == k_end) return p_.store_persist(eok(w), 0);  // commit (in place for all three)
    kind k = kind_of(w);
    if (P::k_cow_small && (k == k_n4 || k == k_n16)) {
      // Copy-on-write. If the pool is full the in-place commit below is just
      // as failure-atomic, so a remove never fails for lack of space.
      uint64_t c = 0;
      try {
        pending_blocks pb(p_);
        c = copy_node(pb, w, k, *header_word(w), -1, 0, int(d));
        pb.commit();
      } catch (const error& e) {
        if (e.code() != errc::pool_full) throw;
      }
      if (c) {
        flush_node(c);
        p_.fence();                 // the copy durable before the swing
        p_.store_persist(slot, c);  // commit
        p_.retire(off_of(w));
        return;
      }
    }
    visit(w, [&](auto ops, auto* n) { ops.remove(p_, n, d); });
  }

  pm::pool& p_;
};

// The end of check() in either layout: the walk's verdict `e` on a tree of
// n records, against the count kept since the open (-1: not yet counted).
inline check_result check_verdict(const char* name, const std::string& e, int64_t n, int64_t& count) {
  if (!e.empty()) return check_result::fail(std::string(name) + ": " + e);
  if (count >= 0 && count != n) return check_result::fail(std::string(name) + ": record count mismatch");
  count = n;
  return {};
}

// stats() of either layout: records, space, the average leaf depth (nodes
// above a leaf) and the nodes of each kind (indexed by kind).
template <class P>
index_stats tree_stats(pm::pool& p, uint64_t leaves, uint64_t depth_sum, const uint64_t* nodes,
                       size_t self_bytes) {
  index_stats s;
  s.records = leaves;
  auto u = p.usage();
  s.pm_bytes_used = u.used_bytes;
  s.pm_bytes_reserved = u.reserved_bytes;
  s.dram_bytes = u.dram_bytes + self_bytes;
  s.alloc_dram_bytes = u.dram_bytes;
  s.extra.push_back({"leaf_depth_avg", leaves ? double(depth_sum) / double(leaves) : 0.0});
  s.extra.push_back({"inner_nodes", double(nodes[k_n4] + nodes[k_n16] + nodes[k_n48] + nodes[k_direct])});
  if (P::k_adaptive) {
    s.extra.push_back({"node4", double(nodes[k_n4])});
    s.extra.push_back({"node16", double(nodes[k_n16])});
    s.extra.push_back({"node48", double(nodes[k_n48])});
    s.extra.push_back({"node256", double(nodes[k_direct])});
  }
  return s;
}

}  // namespace pmindex::art::detail

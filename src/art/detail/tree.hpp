// The radix-tree core shared by WORT, WOART and ART+CoW (FAST'17), for 8-byte
// keys (keys=u64; bytes_tree.hpp is the byte-key layout over the same nodes
// and commits, nodes.hpp). One class template; a policy says what differs
// between the three:
//
//   struct policy {
//     static constexpr const char* k_name;
//     static constexpr unsigned k_span;      // bits per digit: 4 (WORT) or 8
//     static constexpr bool k_adaptive;      // node kinds 4/16/48/256 (else only direct nodes)
//     static constexpr bool k_cow_small;     // Node4/Node16 changed by copy-on-write (ART+CoW)
//     static constexpr bool k_cow_split;     // prefix splits copy the split node (ART+CoW)
//     static constexpr uint64_t k_magic;     // root block magic
//     static constexpr uint64_t k_magic_bytes;  // ... of the byte layout
//   };
//
// Every change commits with one 8-byte (or smaller, aligned) failure-atomic
// store after everything it publishes is durable (flush, fence): a child
// word, a Node4 meta word, a Node16 bitmap, a Node48 index byte, a node
// header, or a leaf value. See tree_write.hpp for the protocols.
//
// Threads: the originals are single-threaded. Here writers lock single
// nodes (optimistic lock coupling, node_locks.hpp): lookups write nothing
// and read no versions (see node_locks.hpp, "Lookups"); writers on
// different nodes run
// in parallel; a writer holds a node's lock until its commit is durable, so
// no reader sees a state a crash could undo. Every operation is pinned
// (epochs): retired blocks stay readable while a reader may hold them.
// Scans and ranges close the writer gate (common/writer_gate.hpp, shared:
// beside other scans, not beside writers), so each is an atomic snapshot as
// before; writers pay one exchange on a line of their own for the gate.
// check(), stats() and trace() close it too.
// What that costs besides the unchanged flushes and fences: a lookup, the
// epoch pin (one fence) and a load of each writer slot's gate flag (with
// a writer inside: a walk again with a load of a lock per node); a writer,
// the pin, two loads of a version per node, the gate
// and one CAS and one store per node it locks. DRAM per
// tree: 128 KiB of version stripes, 32 KiB of per-thread record counts, the
// gate's 32 KiB.
#pragma once

#include <algorithm>
#include <atomic>
#include <cstring>
#include <string>
#include <vector>

#include "art/detail/layout.hpp"
#include "art/detail/node_locks.hpp"
#include "art/detail/nodes.hpp"
#include "common/mutant.hpp"
#include "common/prefetch.hpp"
#include "common/root_block.hpp"
#include "common/writer_gate.hpp"
#include "pmindex/error.hpp"
#include "pmindex/index.hpp"

namespace pmindex::art::detail {

template <class P>
class art_index final : public u64_index, node_kit<P, false> {
 public:
  using dg = digits<P::k_span>;

  art_index(pm::pool& p, open_kind kind, const index_config& cfg);

  bool insert(uint64_t key, uint64_t value) override;
  bool update(uint64_t key, uint64_t value) override;
  bool remove(uint64_t key) override;
  std::optional<uint64_t> lookup(uint64_t key) override;
  size_t scan(uint64_t from, size_t count, record* out) override;
  size_t range(uint64_t lo, uint64_t hi, std::vector<record>& out) override;
  check_result check() override;
  void trace(pm::pool::trace_sink& sink) override;
  index_stats stats() override;

 private:
  using kit = node_kit<P, false>;
  using kit::count, kit::find, kit::header_word, kit::kind_valid, kit::node_size, kit::p_, kit::visit;
  header hdr(uint64_t w) { return decode(__atomic_load_n(header_word(w), __ATOMIC_ACQUIRE)); }
  leaf* leaf_at(uint64_t w) { return p_.template ptr<leaf>(off_of(w)); }
  leaf* min_leaf(uint64_t w) {
    uint64_t l = kit::min_leaf_word(w);
    return l ? leaf_at(l) : nullptr;
  }
  leaf* max_leaf(uint64_t w) {
    uint64_t l = kit::max_leaf_word(w);
    return l ? leaf_at(l) : nullptr;
  }
  // `key` with the digits of node w's prefix in place of its own (digits
  // [h.depth, h.depth + h.plen)); from a leaf when the header holds only
  // part of a long prefix (any leaf below w has w's prefix; false: beside
  // writers the walk to one met a cleared word, restart).
  bool ref_key(uint64_t w, const header& h, uint64_t key, uint64_t* ref) {
    if (h.plen <= dg::k_stored) return *ref = dg::with_stored_prefix(h, key), true;
    leaf* l = min_leaf(w);
    if (!l) return false;
    uint64_t m = dg::mask(h.depth, h.depth + h.plen);
    return *ref = (key & ~m) | (l->key & m), true;
  }

  // --- the descent of readers and writers (node_locks.hpp)
  // false: the descent met a concurrent change (restart). With `path`,
  // notes each node passed (path[j]) and the lock guarding the word it hangs
  // from (owners[j]; owners[depth] guards f.slot).
  bool descend(uint64_t key, found& f, path_step* path = nullptr, seen* owners = nullptr, int* depth = nullptr);
  std::optional<uint64_t> validated_lookup(uint64_t key);
  template <class Check>
  int walk(uint64_t key, Check& c, uint64_t* v);

  // --- writers (tree_write.hpp); they hold the locks of what they change
  void add_child(pending_blocks& pb, uint64_t* slot, uint64_t w, unsigned d, uint64_t lw);
  void split_prefix(pending_blocks& pb, uint64_t* slot, uint64_t w, unsigned pos, unsigned diff, uint64_t ref,
                    uint64_t key, uint64_t lw);

  // --- readers
  // What a walk from `from` fills: scan() up to `count` records into an
  // array, range() every record up to `hi` into a vector. Each is also the
  // queue of the leaves the walk found and has not read yet: a found leaf is
  // asked for at once and read k_lag leaves later (read_leaf), so the walk
  // through the inner nodes runs ahead of the reads and up to k_lag misses
  // are in flight. Each leaf is a block of its own: a walk that read every
  // leaf as it found it waited on one miss after another, and for the next
  // node's lines between them (perf: most of a scan). Measured: see
  // docs/results/scan.md, session 46. (One struct reached through one
  // pointer, as scan's state always was: the walk's code stays as tight.)
  static constexpr size_t k_lag = 64;
  struct scan_state {
    uint64_t from;
    size_t count;
    record* out;
    size_t n = 0;     // out[0, n): leaves found; out[read, n) hold their words
    size_t read = 0;  // out[0, read): records
    void queue(uint64_t w) { out[n++].key = w; }
    bool enough() const { return n == count; }
    size_t queued() const { return n - read; }
    uint64_t next() const { return out[read].key; }
    bool take(uint64_t k, uint64_t v) { return out[read++] = {k, v}, false; }
    static size_t lag() { return k_lag; }  // (the walk stops at `count` found)
    size_t wanted() const { return count - n; }  // records still to find (what to prefetch)
  };
  struct range_state {
    uint64_t from;
    uint64_t hi;
    std::vector<record>* out;
    size_t base;      // out's size before
    size_t read = 0;  // (*out)[base, base + read): records; the rest, words
    void queue(uint64_t w) { out->push_back({w, 0}); }
    static bool enough() { return false; }
    size_t queued() const { return out->size() - base - read; }
    uint64_t next() const { return (*out)[base + read].key; }
    bool take(uint64_t k, uint64_t v) {
      if (k > hi) return out->resize(base + read), true;  // (the words queued after it go too)
      return (*out)[base + read++] = {k, v}, false;
    }
    // The walk learns it is past `hi` only when it reads the leaf: up to
    // lag() leaves were found beyond. So a range starts with the leaves
    // ahead the walk asked for before the queue (wanted()), and the queue
    // grows as the range proves long.
    size_t lag() const { return std::min(k_lag, wanted() + read / 4); }
    static size_t wanted() { return 16; }  // unknown: up to `hi`
  };
  template <class S>
  bool scan_rec(uint64_t w, unsigned pos, bool bounded, S& s);
  // Leaf w, found by the walk: queued if it sorts at or above s.from (while
  // `bounded`: that key is read now; it is the first leaf, where the walk
  // starts). Inlined into its parent's walk: a call per record was a fifth
  // of a scan in cache (WOART scan100 1.3x, 1M records all hot). True: stop.
  template <class S>
  [[gnu::always_inline]] inline bool found_leaf(uint64_t w, bool bounded, S& s) {
    const leaf* l = leaf_at(w);
    if (bounded && l->key < s.from) return false;
    __builtin_prefetch(l);
    s.queue(w);
    if (s.queued() > s.lag() && read_leaf(s)) return true;
    return s.enough();
  }
  // The oldest queued leaf's record into s. True: stop (past range's hi).
  template <class S>
  [[gnu::always_inline]] inline bool read_leaf(S& s) {
    const leaf* l = leaf_at(s.next());
    return s.take(l->key, __atomic_load_n(&l->value, __ATOMIC_ACQUIRE));
  }
  // After the walk: the leaves still queued.
  template <class S>
  void read_queued(S& s) {
    while (s.queued())
      if (read_leaf(s)) return;
  }
  // The lines a walk of inner node k reads (a Node256's first three: it
  // reads a part of its 2 KiB, from where the scan enters it).
  [[gnu::always_inline]] inline void prefetch_node(uint64_t k);
  // Records a scan counts on below an inner child when it decides how far
  // ahead to prefetch. Measured (docs/results/scan.md, sessions 38 and 46):
  // with 256-way nodes (WOART, ART+CoW) 16 (a guess of 1 asks for ~100
  // Node256s at the top for a scan100, lines never read); with WORT's
  // 16-way nodes 1 (its inner children near the leaves hold 2-3 records;
  // 2 and 4 measured the same).
  static constexpr size_t k_inner_guess = dg::k_fanout >= 256 ? 16 : 1;

  // --- verification and recovery (tree_verify.hpp)
  std::string check_rec(uint64_t w, unsigned pos, uint64_t path_key, uint64_t path_mask, int64_t& n,
                        bool& have_prev, uint64_t& prev);
  void recover_rec(uint64_t* slot, unsigned pos, int64_t& n);
  void repair_header(uint64_t w, unsigned pos);
  void check_block(uint64_t w, unsigned pos);
  template <class F>
  void walk(uint64_t w, unsigned depth, F&& f);

  root_block* root_ = nullptr;
  common::mutant_switch<mutant> mutant_;  // nodes.hpp
  node_locks locks_;
  common::writer_gate gate_;
  record_count count_;
};

// ---------------------------------------------------------------- open

template <class P>
art_index<P>::art_index(pm::pool& p, open_kind kind, const index_config& cfg)
    : u64_index(p), kit(p), mutant_(cfg) {
  if (kind == open_kind::created) {
    root_ = common::create_root<root_block>(p_, P::k_magic);
    count_.set(0);
    return;
  }
  root_ = common::attach_root<root_block>(p_, P::k_magic, P::k_name);
  if (kind == open_kind::dirty) {
    // Recovery: validate, repair half-done splits (headers whose depth
    // disagrees with their position), count. Allocates nothing.
    int64_t n = 0;
    recover_rec(&root_->child, 0, n);
    p_.fence();
    count_.set(n);
  }
}

// ---------------------------------------------------------------- readers

// Lookups walk without reading versions (node_locks.hpp, "Lookups"): first
// with no check on the way and, at the end, the writer gate's flags (no
// writer inside: every word read is durable); if a writer was inside, again
// with each node's lock checked (read_path); if one of those was held, or
// a split was under way, the validated descent.
template <class P>
std::optional<uint64_t> art_index<P>::lookup(uint64_t key) {
  auto g = p_.pin();
  uint64_t v = 0;
  int r = lock_free_walks(gate_, locks_, [&](auto& check) { return walk(key, check, &v); });
  if (r < 0) return validated_lookup(key);
  if (!r) return std::nullopt;
  return v;
}

// One lock-free walk: 1 found (*v), 0 absent, -1 undecided (c.free() said
// no, or a split was under way).
template <class P>
template <class Check>
int art_index<P>::walk(uint64_t key, Check& c, uint64_t* v) {
  uint64_t* slot = &root_->child;
  uint64_t lw = 0;
  for (unsigned pos = 0;;) {
    uint64_t w = __atomic_load_n(slot, __ATOMIC_ACQUIRE);
    if (!w) break;
    if (is_leaf(w)) {
      if (leaf_at(w)->key == key) lw = w;
      break;
    }
    c.note(w);
    header h = hdr(w);
    if (h.depth != pos) [[unlikely]]
      return -1;
    if (!dg::stored_prefix_matches(h, key)) break;
    pos += h.plen;
    slot = find(w, dg::at(key, pos));
    if (!slot) break;
    ++pos;
  }
  if (lw) *v = __atomic_load_n(&leaf_at(lw)->value, __ATOMIC_ACQUIRE);
  if (!c.free()) [[unlikely]]
    return -1;
  return lw != 0;
}

// The descent with lock coupling (pinned by the caller): waits for writers.
template <class P>
std::optional<uint64_t> art_index<P>::validated_lookup(uint64_t key) {
  for (;;) {
    found f;
    if (!descend(key, f)) continue;
    uint64_t v = f.lw ? __atomic_load_n(&leaf_at(f.lw)->value, __ATOMIC_ACQUIRE) : 0;
    if (!f.owner.still()) continue;  // the word or the value changed (or is not durable yet)
    if (!f.lw) return std::nullopt;
    return v;
  }
}

// Optimistic descent: only the stored prefix digits are compared on the way
// down; the full key is compared at the leaf (leaf keys never change).
template <class P>
bool art_index<P>::descend(uint64_t key, found& f, path_step* path, seen* owners, int* depth) {
  seen o = locks_.see_root();
  uint64_t* slot = &root_->child;
  unsigned pos = 0;
  int dep = 0;
  if (owners) owners[0] = o;
  for (;;) {
    uint64_t w = __atomic_load_n(slot, __ATOMIC_ACQUIRE);
    if (!w || is_leaf(w)) {
      f = {slot, w && leaf_at(w)->key == key ? w : 0, o};
      break;
    }
    seen n = locks_.see(w);
    if (!o.still()) return false;  // w was o's child when n was read
    header h = hdr(w);
    if (h.depth != pos && !n.still_or_damaged(P::k_name)) return false;  // a split under way
    if (!dg::stored_prefix_matches(h, key)) {
      f = {nullptr, 0, n};
      break;
    }
    pos += h.plen;
    unsigned d = dg::at(key, pos);
    uint64_t* s = find(w, d);
    if (!s) {
      f = {nullptr, 0, n};
      break;
    }
    if (path) path[dep] = {slot, w, d}, owners[dep + 1] = n;
    ++dep;
    slot = s;
    o = n;
    ++pos;
  }
  if (depth) *depth = dep;
  return true;
}

template <class P>
size_t art_index<P>::scan(uint64_t from, size_t count, record* out) {
  if (!count) return 0;
  common::writer_gate::shared_closed no_writers(gate_);
  scan_state s{from, count, out};
  uint64_t w = __atomic_load_n(&root_->child, __ATOMIC_ACQUIRE);
  if (w) scan_rec(w, 0, true, s);
  read_queued(s);
  return s.read;
}

// One walk with writers excluded: an atomic snapshot like scan() (the
// generic index::range would let writers in between batches).
template <class P>
size_t art_index<P>::range(uint64_t lo, uint64_t hi, std::vector<record>& out) {
  if (lo > hi) return 0;
  common::writer_gate::shared_closed no_writers(gate_);
  size_t n0 = out.size();
  range_state s{lo, hi, &out, n0};
  uint64_t w = __atomic_load_n(&root_->child, __ATOMIC_ACQUIRE);
  if (w && !scan_rec(w, 0, true, s)) read_queued(s);
  return out.size() - n0;
}

// In-order walk of the subtree at w (found at digit position pos). While
// `bounded`, the path so far equals the digits of `from`, so subtrees that
// sort below it are skipped. Returns true when s said stop.
template <class P>
template <class S>
bool art_index<P>::scan_rec(uint64_t w, unsigned pos, bool bounded, S& s) {
  if (is_leaf(w)) return found_leaf(w, bounded, s);
  header h = hdr(w);
  unsigned b = pos + h.plen;
  if (bounded && h.plen) {
    uint64_t m = dg::mask(pos, b), ref = 0;
    [[maybe_unused]] bool ok = ref_key(w, h, s.from, &ref);
    PMINDEX_ASSERT(ok);  // no writer runs beside a scan
    uint64_t mine = ref & m, want = s.from & m;
    if (mine < want) return false;  // the whole subtree sorts below `from`
    if (mine > want) bounded = false;
  }
  unsigned c = bounded ? dg::at(s.from, b) : 0;
  // The children are gathered in key order, then walked: a leaf is queued
  // (found_leaf: asked for now, read later), an inner child walked. The
  // walk waits only on inner nodes, so it asks for them ahead: each whole,
  // while the records before them (leaves one each, inner children
  // k_inner_guess each) will likely not end the scan. No writer runs, so
  // the words stay.
  uint64_t kid[dg::k_fanout];
  uint8_t digit[dg::k_fanout];
  // 256-way nodes gather their children in batches of about what the scan
  // wants, not up to 256 words; WORT's 16-way nodes whole.
  for (unsigned from = c;;) {
    const unsigned cap =
        k_inner_guess == 1 ? dg::k_fanout : unsigned(std::clamp<size_t>(s.wanted() + 1, 4, dg::k_fanout));
    unsigned nk = 0;
    visit(w, [&](auto ops, auto* n) {
      return ops.for_each(
          n,
          [&](unsigned d, uint64_t* slot) {
            kid[nk] = __atomic_load_n(slot, __ATOMIC_ACQUIRE), digit[nk++] = uint8_t(d);
            return nk == cap;
          },
          from);
    });
    unsigned ahead = 0, leaves = 0, inners = 0;  // kid[i, ahead) are counted: so many of each
    for (unsigned i = 0; i < nk; ++i) {
      while (ahead < nk && (ahead == i || leaves + inners * k_inner_guess < s.wanted())) {
        if (is_leaf(kid[ahead])) {
          ++leaves;
        } else {
          prefetch_node(kid[ahead]);
          ++inners;
        }
        ++ahead;
      }
      if (is_leaf(kid[i])) {
        if (found_leaf(kid[i], bounded && digit[i] == c, s)) return true;
        --leaves;
        continue;
      }
      if (scan_rec(kid[i], b + 1, bounded && digit[i] == c, s)) return true;
      --inners;
    }
    if (nk < cap || digit[nk - 1] + 1u >= dg::k_fanout) return false;  // the node is walked
    from = digit[nk - 1] + 1u;
  }
}

template <class P>
inline void art_index<P>::prefetch_node(uint64_t k) {
  const uint64_t z = node_size(kind_of(k));
  common::prefetch_lines(p_.template ptr<char>(off_of(k)), z <= 1024 ? z : 192);
}

}  // namespace pmindex::art::detail

#include "art/detail/tree_verify.hpp"
#include "art/detail/tree_write.hpp"

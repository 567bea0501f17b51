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
// Scans and ranges close the writer gate (sync/writer_gate.hpp, shared:
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
#include "sync/writer_gate.hpp"
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
  using kit::count, kit::expand, kit::find, kit::header_word, kit::kind_valid, kit::listed, kit::node_size, kit::p_,
      kit::visit;
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

  // A writer's walk to a node's smallest leaf found none (ref_key false):
  // a word cleared beside it (restart), or a damaged pool, whose node with
  // no leaf below sent the writer round forever (writers unlink a node
  // before it empties). Looks again with every writer shut out (the race
  // is rare): errc::corrupt if a node on key's path has no valid leaf
  // below. The caller holds no node lock (others would wait inside).
  [[gnu::cold, gnu::noinline]] void confirm_leaf_below(uint64_t key);

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
  // Scans find their records level by level (a breadth-first walk of the
  // subtrees at and after `from`), not depth first. `seed` lists, in key
  // order, the words hanging right of the path to `from`; each `expand`
  // replaces every inner word in the list by its children, until only
  // leaves remain; then the leaves are read. Every word is asked for where
  // it is listed, a whole list before it is read: the misses of one level
  // (the next level's nodes, the leaves) are in flight together, and a scan
  // waits about once per level, not once per node (a depth-first walk waits
  // on each node below the ones it could ask for ahead: WORT's 16-way nodes
  // leave two levels of them under every 16 records). No writer runs beside
  // a scan (the gate), so the words stay. A list stops where the records
  // guessed below its words fill the walk; a walk that then finds too few
  // (a guess too high) is "cut" and the scan walks again from its last key.
  static constexpr size_t k_batch = 4096;  // records per walk (longer scans: walks again from the last key)
  using list = walk_list;
  struct walk_state {
    uint64_t from;
    list now, next;
  };
  void seed(uint64_t w, unsigned pos, walk_state& s);
  // Up to count (<= k_batch) records from `from` into out: one walk. *cut:
  // it may have left records out before the end.
  size_t batch(uint64_t from, size_t count, record* out, bool* cut);

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
  size_t n = 0;
  while (n < count) {
    const size_t want = std::min(count - n, k_batch);
    bool cut = false;
    const size_t got = batch(from, want, out + n, &cut);
    n += got;
    if (!got || (got < want && !cut) || out[n - 1].key == UINT64_MAX) break;
    from = out[n - 1].key + 1;
  }
  return n;
}

// Walks with writers excluded: an atomic snapshot like scan() (the generic
// index::range would let writers in between batches). A walk cannot stop
// at `hi` before it reads the leaves, so the first reads 16 records and
// each next one twice as many while the range goes on.
template <class P>
size_t art_index<P>::range(uint64_t lo, uint64_t hi, std::vector<record>& out) {
  if (lo > hi) return 0;
  common::writer_gate::shared_closed no_writers(gate_);
  const size_t n0 = out.size();
  for (size_t want = 16;; want = std::min(2 * want, k_batch)) {
    const size_t at = out.size();
    out.resize(at + want);
    bool cut = false;
    const size_t got = batch(lo, want, out.data() + at, &cut);
    auto end = std::upper_bound(out.begin() + at, out.begin() + at + got, hi,
                                [](uint64_t k, const record& r) { return k < r.key; });
    out.erase(end, out.end());
    const size_t kept = out.size() - at;
    if (!kept || (kept < want && !(cut && kept == got)) || out.back().key == hi) break;
    lo = out.back().key + 1;
  }
  return out.size() - n0;
}

template <class P>
size_t art_index<P>::batch(uint64_t from, size_t count, record* out, bool* cut) {
  thread_local std::vector<uint64_t> space;
  if (space.size() < 2 * (k_batch + 1)) space.resize(2 * (k_batch + 1));
  walk_state s{from, {space.data()}, {space.data() + k_batch + 1}};
  s.now.want = s.next.want = count;
  if (uint64_t w = __atomic_load_n(&root_->child, __ATOMIC_ACQUIRE)) seed(w, 0, s);
  bool any_cut = s.now.cut;
  while (expand(s.now, s.next)) {
    std::swap(s.now, s.next);
    any_cut |= s.now.cut;
  }
  const list& f = s.next;
  any_cut |= f.cut;
  const size_t n = std::min(f.n, count);
  for (size_t i = 0; i < n; ++i) {
    const leaf* l = leaf_at(f.w[i]);
    out[i] = {l->key, __atomic_load_n(&l->value, __ATOMIC_ACQUIRE)};
  }
  *cut = any_cut;
  return n;
}

// The path to s.from below w (found at digit position pos): the words right
// of it into s.now, deepest first (they sort first).
template <class P>
void art_index<P>::seed(uint64_t w, unsigned pos, walk_state& s) {
  list& f = s.now;
  if (is_leaf(w)) {
    if (leaf_at(w)->key >= s.from) f.w[f.n++] = w, ++f.guessed;
    return;
  }
  header h = hdr(w);
  const unsigned b = pos + h.plen;
  if (h.plen) {
    uint64_t m = dg::mask(pos, b), ref = 0;
    [[maybe_unused]] bool ok = ref_key(w, h, s.from, &ref);
    PMINDEX_ASSERT(ok);  // no writer runs beside a scan
    const uint64_t mine = ref & m, want = s.from & m;
    if (mine < want) return;  // the whole subtree sorts below `from`
    if (mine > want) return listed(w, f);
  }
  const unsigned c = dg::at(s.from, b);
  if (uint64_t* slot = find(w, c)) seed(__atomic_load_n(slot, __ATOMIC_ACQUIRE), b + 1, s);
  if (c + 1 >= dg::k_fanout) return;
  if (f.full()) {
    f.cut = true;  // (perhaps nothing was left: a walk again finds that)
    return;
  }
  visit(w, [&](auto ops, auto* n) {
    return ops.for_each(
        n,
        [&](unsigned, uint64_t* slot) {
          if (f.full()) return f.cut = true;
          listed(__atomic_load_n(slot, __ATOMIC_ACQUIRE), f);
          return false;
        },
        c + 1);
  });
}

}  // namespace pmindex::art::detail

#include "art/detail/tree_verify.hpp"
#include "art/detail/tree_write.hpp"

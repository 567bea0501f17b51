// The radix-tree core shared by WORT, WOART and ART+CoW (FAST'17). One class
// template; a policy says what differs between the three:
//
//   struct policy {
//     static constexpr const char* k_name;
//     static constexpr unsigned k_span;      // bits per digit: 4 (WORT) or 8
//     static constexpr bool k_adaptive;      // node kinds 4/16/48/256 (else only direct nodes)
//     static constexpr bool k_cow_small;     // Node4/Node16 changed by copy-on-write (ART+CoW)
//     static constexpr bool k_cow_split;     // prefix splits copy the split node (ART+CoW)
//     static constexpr uint64_t k_magic;     // root block magic
//   };
//
// Every change commits with one 8-byte (or smaller, aligned) failure-atomic
// store after everything it publishes is durable (flush, fence): a child
// word, a Node4 meta word, a Node16 bitmap, a Node48 index byte, a node
// header, or a leaf value. See tree_write.hpp for the protocols.
//
// Threads: the originals are single-threaded. Here a std::shared_mutex
// serialises writers against everything; lookups and scans take it shared.
// A writer persists each change before it releases the lock, so a reader
// never sees a state a crash could undo (no UNPERSISTED bits needed). For the
// same reason readers do not pin an epoch: a writer retires a block only
// after unlinking it under the exclusive lock, so no reader can still hold
// it; retire() (not free()) keeps the unlink-durable-before-reuse rule.
#pragma once

#include <algorithm>
#include <atomic>
#include <cstring>
#include <mutex>
#include <shared_mutex>
#include <string>

#include "art/detail/layout.hpp"
#include "art/detail/node16.hpp"
#include "art/detail/node4.hpp"
#include "art/detail/node48.hpp"
#include "art/detail/node_direct.hpp"
#include "common/mutant.hpp"
#include "common/root_block.hpp"
#include "pmindex/error.hpp"
#include "pmindex/index.hpp"

namespace pmindex::art::detail {

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

template <class P>
class art_index final : public u64_index {
 public:
  using dg = digits<P::k_span>;
  using direct = direct_ops<dg::k_fanout>;

  art_index(pm::pool& p, open_kind kind, const index_config& cfg);

  bool insert(uint64_t key, uint64_t value) override;
  bool update(uint64_t key, uint64_t value) override;
  bool remove(uint64_t key) override;
  std::optional<uint64_t> lookup(uint64_t key) override;
  size_t scan(uint64_t from, size_t count, record* out) override;
  check_result check() override;
  void trace(pm::pool::trace_sink& sink) override;
  index_stats stats() override;

 private:
  // --- node access, dispatched on the kind tag of a child word
  template <class F>
  decltype(auto) visit(uint64_t w, F&& f) {
    char* b = p_.ptr<char>(off_of(w));
    if constexpr (P::k_adaptive) {
      switch (kind_of(w)) {
        case k_n4: return f(node4_ops{}, reinterpret_cast<node4*>(b));
        case k_n16: return f(node16_ops{}, reinterpret_cast<node16*>(b));
        case k_n48: return f(node48_ops{}, reinterpret_cast<node48*>(b));
        default: break;
      }
    }
    PMINDEX_ASSERT(kind_of(w) == k_direct);
    return f(direct{}, reinterpret_cast<typename direct::node*>(b));
  }
  bool kind_valid(kind k) const {
    return k == k_direct || (P::k_adaptive && (k == k_n4 || k == k_n16 || k == k_n48));
  }
  uint64_t node_size(kind k) const {
    switch (k) {
      case k_n4: return node4_ops::k_size;
      case k_n16: return node16_ops::k_size;
      case k_n48: return node48_ops::k_size;
      default: return direct::k_size;
    }
  }
  uint64_t* header_word(uint64_t w) { return p_.ptr<uint64_t>(off_of(w)); }
  header hdr(uint64_t w) { return decode(__atomic_load_n(header_word(w), __ATOMIC_ACQUIRE)); }
  leaf* leaf_at(uint64_t w) { return p_.ptr<leaf>(off_of(w)); }
  uint64_t* find(uint64_t w, unsigned d) {
    return visit(w, [&](auto ops, auto* n) { return ops.find(n, d); });
  }
  unsigned count(uint64_t w) {
    return visit(w, [&](auto ops, auto* n) { return ops.count(n); });
  }
  // The smallest / largest leaf below a child word.
  leaf* min_leaf(uint64_t w) {
    while (!is_leaf(w)) {
      uint64_t next = 0;
      visit(w, [&](auto ops, auto* n) { return ops.for_each(n, [&](unsigned, uint64_t* s) { return (next = *s), true; }); });
      if (!next) return nullptr;
      w = next;
    }
    return leaf_at(w);
  }
  leaf* max_leaf(uint64_t w) {
    while (!is_leaf(w)) {
      uint64_t next = 0;
      visit(w, [&](auto ops, auto* n) { return ops.for_each(n, [&](unsigned, uint64_t* s) { return (next = *s), false; }); });
      if (!next) return nullptr;
      w = next;
    }
    return leaf_at(w);
  }
  // `key` with the digits of node w's prefix in place of its own (digits
  // [h.depth, h.depth + h.plen)); from a leaf when the header holds only
  // part of a long prefix.
  uint64_t ref_key(uint64_t w, const header& h, uint64_t key) {
    if (h.plen <= dg::k_stored) return dg::with_stored_prefix(h, key);
    uint64_t m = dg::mask(h.depth, h.depth + h.plen);
    return (key & ~m) | (min_leaf(w)->key & m);
  }

  // --- writers (tree_write.hpp); the exclusive lock is held
  uint64_t new_node(pending_blocks& pb, kind k, uint64_t hdr_word);
  uint64_t copy_node(pending_blocks& pb, uint64_t w, kind to, uint64_t hdr_word, int add_digit,
                     uint64_t add_child, int skip_digit);
  void flush_node(uint64_t w) { p_.flush(p_.ptr(off_of(w)), node_size(kind_of(w))); }
  void add_child(pending_blocks& pb, uint64_t* slot, uint64_t w, unsigned d, uint64_t lw);
  void split_prefix(pending_blocks& pb, uint64_t* slot, uint64_t w, unsigned pos, unsigned diff, uint64_t ref,
                    uint64_t key, uint64_t lw);
  void remove_entry(uint64_t* slot, uint64_t w, unsigned d);
  leaf* find_leaf(uint64_t key);

  // --- readers
  struct scan_state {
    uint64_t from;
    size_t count;
    record* out;
    size_t n;
  };
  bool scan_rec(uint64_t w, unsigned pos, bool bounded, scan_state& s);

  // --- verification and recovery (tree_verify.hpp)
  std::string check_rec(uint64_t w, unsigned pos, uint64_t path_key, uint64_t path_mask, int64_t& n,
                        bool& have_prev, uint64_t& prev);
  void recover_rec(uint64_t* slot, unsigned pos, int64_t& n);
  void repair_header(uint64_t w, unsigned pos);
  void check_block(uint64_t w, unsigned pos);
  template <class F>
  void walk(uint64_t w, unsigned depth, F&& f);

  pm::pool& p_;
  root_block* root_ = nullptr;
  // Crash-checker self-test (params "mutant=NAME", test builds only, WOART):
  // an in-place insert that makes its commit durable before the child word,
  // i.e. two fields changed non-atomically, in Node4 (meta word), Node16
  // (bitmap) or Node48 (index byte). `pmindex crashtest` must catch each
  // (tests/crash/wort_crash.cmake).
  enum class mutant : unsigned { none, node4_child_after_meta, node16_bitmap_before_child, node48_index_before_child };
  common::mutant_switch<mutant> mutant_;
  std::shared_mutex mu_;
  int64_t count_ = -1;  // records; -1 until counted (clean open)
};

// ---------------------------------------------------------------- open

template <class P>
art_index<P>::art_index(pm::pool& p, open_kind kind, const index_config& cfg) : u64_index(p), p_(p), mutant_(cfg) {
  if (kind == open_kind::created) {
    root_ = common::create_root<root_block>(p_, P::k_magic);
    count_ = 0;
    return;
  }
  root_ = common::attach_root<root_block>(p_, P::k_magic, P::k_name);
  if (kind == open_kind::dirty) {
    // Recovery: validate, repair half-done splits (headers whose depth
    // disagrees with their position), count. Allocates nothing.
    int64_t n = 0;
    recover_rec(&root_->child, 0, n);
    p_.fence();
    count_ = n;
  }
}

// ---------------------------------------------------------------- readers

template <class P>
std::optional<uint64_t> art_index<P>::lookup(uint64_t key) {
  std::shared_lock lk(mu_);
  leaf* l = find_leaf(key);
  if (!l) return std::nullopt;
  return __atomic_load_n(&l->value, __ATOMIC_ACQUIRE);
}

// Optimistic descent: only the stored prefix digits are compared on the way
// down; the full key is compared at the leaf.
template <class P>
leaf* art_index<P>::find_leaf(uint64_t key) {
  uint64_t w = __atomic_load_n(&root_->child, __ATOMIC_ACQUIRE);
  unsigned pos = 0;
  while (w) {
    if (is_leaf(w)) {
      leaf* l = leaf_at(w);
      return l->key == key ? l : nullptr;
    }
    header h = hdr(w);
    PMINDEX_ASSERT(h.depth == pos);  // recovery repaired every half-done split
    if (!dg::stored_prefix_matches(h, key)) return nullptr;
    pos += h.plen;
    uint64_t* s = find(w, dg::at(key, pos));
    if (!s) return nullptr;
    w = __atomic_load_n(s, __ATOMIC_ACQUIRE);
    ++pos;
  }
  return nullptr;
}

template <class P>
size_t art_index<P>::scan(uint64_t from, size_t count, record* out) {
  if (!count) return 0;
  std::shared_lock lk(mu_);
  scan_state s{from, count, out, 0};
  uint64_t w = __atomic_load_n(&root_->child, __ATOMIC_ACQUIRE);
  if (w) scan_rec(w, 0, true, s);
  return s.n;
}

// In-order walk of the subtree at w (found at digit position pos). While
// `bounded`, the path so far equals the digits of `from`, so subtrees that
// sort below it are skipped. Returns true when the output is full.
template <class P>
bool art_index<P>::scan_rec(uint64_t w, unsigned pos, bool bounded, scan_state& s) {
  if (is_leaf(w)) {
    leaf* l = leaf_at(w);
    if (!bounded || l->key >= s.from) s.out[s.n++] = {l->key, __atomic_load_n(&l->value, __ATOMIC_ACQUIRE)};
    return s.n == s.count;
  }
  header h = hdr(w);
  unsigned b = pos + h.plen;
  if (bounded && h.plen) {
    uint64_t m = dg::mask(pos, b);
    uint64_t mine = ref_key(w, h, s.from) & m, want = s.from & m;
    if (mine < want) return false;  // the whole subtree sorts below `from`
    if (mine > want) bounded = false;
  }
  unsigned c = bounded ? dg::at(s.from, b) : 0;
  return visit(w, [&](auto ops, auto* n) {
    return ops.for_each(n, [&](unsigned d, uint64_t* slot) {
      if (bounded && d < c) return false;
      return scan_rec(__atomic_load_n(slot, __ATOMIC_ACQUIRE), b + 1, bounded && d == c, s);
    });
  });
}

}  // namespace pmindex::art::detail

#include "art/detail/tree_verify.hpp"
#include "art/detail/tree_write.hpp"

// The WORT-family core for byte keys (keys=bytes): the node kinds, commits
// and policies of tree.hpp over the layout of bytes_layout.hpp (end-of-key
// words for keys that are prefixes of others, 16-bit depths, kv-block
// leaves). One class template; its operations live in bytes_walk.hpp
// (in-order walks without recursion: scan, range), bytes_write.hpp (insert,
// upsert, update, remove) and bytes_verify.hpp (check, trace, stats,
// recovery).
//
// Commit words and persistence per operation (L = the cache lines of the new
// leaf's kv block, 8 + key + value bytes; every protocol flushes it, then
// fences before its one commit store):
//   insert into an empty child, end-of-key or root word: L + 1 flushes,
//     2 fences (the word);
//   insert into a node in place: that node kind's u64 protocol (node*.hpp)
//     with L leaf lines: WORT L + 1, WOART Node4 L + 1, Node16 L + 1-2,
//     Node48 L + 2, 2 fences;
//   insert next to a leaf, or growing / copying a node: L + the new node's
//     lines + 1 (the slot word), 2 fences;
//   prefix split: L + the new node + 1 (header) + 1 (slot), 3 fences
//     (ART+CoW: the copy's lines instead of the header store, 2 fences);
//   update (out of place): L + 1 flushes, 2 fences: a new kv block, then the
//     one word naming the leaf swung; the old block retired;
//   remove: 1 flush, 1 fence (one word: a child, end-of-key, node commit or
//     slot word); ART+CoW Node4/16: the copy's lines + 1, 2 fences.
// Half-done WORT/WOART splits are found and repaired by recovery exactly as
// in the u64 layout (the header's depth disagrees with the node's position).
//
// Threads: as tree.hpp (optimistic lock coupling on per-node version locks,
// node_locks.hpp; writers hold a node's lock until their commit is durable;
// scans and ranges close the writer gate; lookups read no versions,
// node_locks.hpp "Lookups"). A lookup copies the value out of the kv block,
// then checks: blocks never change once published and every operation is
// pinned, so a retired block is still intact when it is read.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "art/detail/bytes_layout.hpp"
#include "art/detail/node_locks.hpp"
#include "art/detail/nodes.hpp"
#include "common/full_pool.hpp"
#include "common/kv_block.hpp"
#include "common/prefetch.hpp"
#include "common/mutant.hpp"
#include "common/root_block.hpp"
#include "sync/writer_gate.hpp"
#include "pmindex/error.hpp"
#include "pmindex/index.hpp"

namespace pmindex::art::detail {

// A node on the stack of a walk (bytes_walk.hpp).
struct walk_frame {
  uint64_t w;    // the node
  unsigned pos;  // the position it is found at
  unsigned b;    // its branch position (set by the walk's enter())
  int next;      // -1: its end-of-key entry comes next; else the next digit to look at
  int bound;     // the one child digit a scan's start key still bounds (-1: none)
};
// The digit passed for the root (it hangs below no digit).
inline constexpr unsigned k_no_digit = k_end + 1;

template <class P>
class art_bytes_index final : public bytes_index, node_kit<P, true> {
 public:
  using dg = byte_digits<P::k_span>;
  static constexpr size_t k_max_key = 4096;
  static constexpr size_t k_max_value = common::k_max_value;
  static constexpr unsigned k_max_digits = k_max_key * dg::k_per_byte;
  static_assert(k_max_digits < dg::k_max_position, "positions must fit the header's 16 bits");

  art_bytes_index(pm::pool& p, open_kind kind, const index_config& cfg);

  // Every update retires a leaf block: a write that met a full pool is
  // tried once more when they came back (common/full_pool.hpp).
  bool insert(std::string_view key, std::string_view value) override {
    return common::retry_when_full(p_, [&] { return put(key, value, false); });
  }
  bool upsert(std::string_view key, std::string_view value) override {
    return common::retry_when_full(p_, [&] { return put(key, value, true); });
  }
  bool update(std::string_view key, std::string_view value) override {
    return common::retry_when_full(p_, [&] { return update_once(key, value); });
  }
  bool remove(std::string_view key) override;
  bool lookup(std::string_view key, std::string* value) override;
  size_t scan(std::string_view from, size_t count, record_buffer& out) override;
  size_t range(std::string_view lo, std::string_view hi, record_buffer& out) override;
  check_result check() override;
  void trace(pm::pool::trace_sink& sink) override;
  index_stats stats() override;

 private:
  using kit = node_kit<P, true>;
  using kit::count, kit::entry, kit::eok, kit::expand, kit::find, kit::header_word, kit::kind_valid, kit::listed,
      kit::load_eok, kit::node_size, kit::p_, kit::visit;

  header hdr(uint64_t w) { return dg::decode(__atomic_load_n(header_word(w), __ATOMIC_ACQUIRE)); }
  const common::kv_block* leaf_at(uint64_t w) { return common::kv_at(p_, off_of(w)); }
  std::string_view leaf_key(uint64_t w) { return common::kv_key(leaf_at(w)); }
  std::string_view leaf_value(uint64_t w) { return common::kv_value(leaf_at(w)); }
  uint64_t leaf_size(uint64_t w) { return common::kv_block_size(p_, off_of(w)); }
  // The key of the smallest leaf below node w: it holds the node's path.
  std::string_view min_key(uint64_t w) { return leaf_key(kit::min_leaf_word(w)); }

  // Node w's prefix digit at position q (h.depth <= q < h.depth + h.plen):
  // from the header, or from a leaf below when not stored.
  unsigned prefix_digit(uint64_t w, const header& h, unsigned q) {
    unsigned i = q - h.depth;
    return i < dg::stored_count(h) ? dg::stored_digit(h, i) : dg::at(min_key(w), q);
  }
  // The first position in [h.depth, h.depth + h.plen) where `key` leaves
  // the node's prefix, or h.depth + h.plen; ref() gives a key below the node
  // when the header does not hold the whole prefix.
  template <class Ref>
  unsigned prefix_diff(const header& h, std::string_view key, Ref&& ref);
  unsigned prefix_diff(uint64_t w, const header& h, std::string_view key) {
    return prefix_diff(h, key, [&] { return min_key(w); });
  }

  // --- the descent of readers and writers (node_locks.hpp)
  // false: met a concurrent change (restart). With `path`, notes each node
  // passed and, in `owners`, the lock guarding the word it hangs from
  // (owners->back() guards f.slot).
  bool descend(std::string_view key, found& f, std::vector<path_step>* path = nullptr,
               std::vector<seen>* owners = nullptr);
  bool validated_lookup(std::string_view key, std::string* value);
  template <class Check>
  int walk(std::string_view key, Check& c, std::string* value);

  // --- writers (bytes_write.hpp); they hold the locks of what they change
  struct spot {
    uint64_t* slot;  // the word to change
    uint64_t w;      // what it holds
    unsigned pos;    // the position it is found at
    unsigned diff;   // mismatch: where the key leaves w's prefix
    unsigned d;      // no_child: the missing digit
    enum { empty, present, at_leaf, mismatch, no_child } what;
    seen o;          // guards *slot
    seen n;          // guards node w
    bool full;       // no_child: w is full
  };
  bool locate(std::string_view key, spot& s);
  // As art_index::confirm_leaf_below: a writer's walk to a leaf below a
  // node (for its prefix) found none; errc::corrupt if that is damage.
  [[gnu::cold, gnu::noinline]] void confirm_leaf_below(std::string_view key);
  bool put(std::string_view key, std::string_view value, bool overwrite);
  bool update_once(std::string_view key, std::string_view value);
  uint64_t new_leaf(pending_blocks& pb, std::string_view key, std::string_view value);

  // --- walks (bytes_walk.hpp)
  template <class Enter, class Leaf, class Leave>
  bool walk(uint64_t w, bool bounded, Enter&& enter, Leaf&& leaf, Leave&& leave);
  void prefetch_children(const walk_frame& f);
  // Scans and ranges walk level by level, as tree.hpp's do (see there):
  // lists of child words in key order, every word asked for where it is
  // listed, a list expanded a level at a time until only leaves remain.
  static constexpr size_t k_batch = 4096;  // records per walk (more: walks again after the last key)
  void seed(std::string_view from, walk_list& f);  // (listing and expanding: node_kit)
  template <class Sink>
  bool batch(std::string_view from, size_t want, Sink& sink, bool& cut);
  template <class Sink, class Next>
  void walks(std::string_view from, size_t want, Sink& sink, Next next_want);

  // --- verification and recovery (bytes_verify.hpp)
  std::string check_tree(int64_t& n);
  void recover(int64_t& n);
  void check_node_word(uint64_t w);
  void repair_header(uint64_t w, unsigned pos);
  [[noreturn]] void corrupt(const std::string& what) const {
    throw error(errc::corrupt, std::string(P::k_name) + " (keys=bytes): " + what);
  }

  root_block* root_ = nullptr;
  common::mutant_switch<mutant> mutant_;  // nodes.hpp
  node_locks locks_;
  common::writer_gate gate_;
  record_count count_;
};

// ---------------------------------------------------------------- open

template <class P>
art_bytes_index<P>::art_bytes_index(pm::pool& p, open_kind kind, const index_config& cfg)
    : bytes_index(p), kit(p), mutant_(cfg) {
  if (kind == open_kind::created) {
    root_ = common::create_root<root_block>(p_, P::k_magic_bytes);
    count_.set(0);
    return;
  }
  root_ = common::attach_root<root_block>(p_, P::k_magic_bytes, P::k_name);
  if (kind == open_kind::dirty) {
    // Recovery: validate, repair half-done splits, count. Allocates nothing.
    int64_t n = 0;
    recover(n);
    p_.fence();
    count_.set(n);
  }
}

// ---------------------------------------------------------------- readers

template <class P>
template <class Ref>
unsigned art_bytes_index<P>::prefix_diff(const header& h, std::string_view key, Ref&& ref) {
  const unsigned b = h.depth + h.plen, len = dg::length(key), n = dg::stored_count(h);
  for (unsigned i = 0; i < n; ++i) {
    unsigned q = h.depth + i;
    if (q == len || dg::at(key, q) != dg::stored_digit(h, i)) return q;
  }
  if (h.plen == n) return b;
  unsigned from = h.depth + n;
  if (len <= from) return len;
  return std::min(dg::first_diff(key, ref(), from), b);
}

// Optimistic descent (tree.hpp): only stored prefix digits are compared on
// the way down, the whole key at the leaf.
template <class P>
bool art_bytes_index<P>::descend(std::string_view key, found& f, std::vector<path_step>* path,
                                 std::vector<seen>* owners) {
  const unsigned len = dg::length(key);
  seen o = locks_.see_root();
  uint64_t* slot = &root_->child;
  unsigned pos = 0;
  if (path) path->clear(), owners->assign(1, o);
  for (;;) {
    uint64_t w = __atomic_load_n(slot, __ATOMIC_ACQUIRE);
    if (!w || is_leaf(w)) {
      f = {slot, w && leaf_key(w) == key ? w : 0, o};
      return true;
    }
    seen n = locks_.see(w);
    if (!o.still()) return false;  // w was o's child when n was read
    header h = hdr(w);
    if (h.depth != pos && !n.still_or_damaged(P::k_name)) return false;  // a split under way
    unsigned b = pos + h.plen;
    if (len < b || !dg::stored_prefix_matches(h, key)) {
      f = {nullptr, 0, n};
      return true;
    }
    unsigned d = dg::at_or_end(key, b);  // k_end: the end-of-key word (a leaf or nothing)
    uint64_t* s = entry(w, d);
    if (!s) {
      f = {nullptr, 0, n};
      return true;
    }
    if (path) path->push_back({slot, w, d}), owners->push_back(n);
    slot = s;
    o = n;
    pos = b + 1;
  }
}

// As tree.hpp's lookup (node_locks.hpp, "Lookups"): a walk with the gate
// checked at the end, then one with each node's lock checked, then the
// validated descent.
template <class P>
bool art_bytes_index<P>::lookup(std::string_view key, std::string* value) {
  check_key(key);
  auto g = p_.pin();
  int r = lock_free_walks(gate_, locks_, [&](auto& check) { return walk(key, check, value); });
  if (r < 0) return validated_lookup(key, value);
  return r;
}

// One lock-free walk: 1 found (its value copied to *value, if given), 0
// absent, -1 undecided (c.free() said no, or a split was under way).
template <class P>
template <class Check>
int art_bytes_index<P>::walk(std::string_view key, Check& c, std::string* value) {
  const unsigned len = dg::length(key);
  uint64_t* slot = &root_->child;
  uint64_t lw = 0;
  for (unsigned pos = 0;;) {
    uint64_t w = __atomic_load_n(slot, __ATOMIC_ACQUIRE);
    if (!w) break;
    if (is_leaf(w)) {
      if (leaf_key(w) == key) lw = w;
      break;
    }
    c.note(w);
    header h = hdr(w);
    if (h.depth != pos) [[unlikely]]
      return -1;
    unsigned b = pos + h.plen;
    if (len < b || !dg::stored_prefix_matches(h, key)) break;
    slot = entry(w, dg::at_or_end(key, b));
    if (!slot) break;
    pos = b + 1;
  }
  if (lw && value) value->assign(leaf_value(lw));  // the block is immutable and pinned
  if (!c.free()) [[unlikely]]
    return -1;
  return lw != 0;
}

// The descent with lock coupling (pinned by the caller): waits for writers.
template <class P>
bool art_bytes_index<P>::validated_lookup(std::string_view key, std::string* value) {
  for (;;) {
    found f;
    if (!descend(key, f)) continue;
    if (f.lw && value) value->assign(leaf_value(f.lw));  // the block is immutable and pinned
    if (f.owner.still()) return f.lw != 0;
  }
}

}  // namespace pmindex::art::detail

#include "art/detail/bytes_verify.hpp"
#include "art/detail/bytes_walk.hpp"
#include "art/detail/bytes_write.hpp"

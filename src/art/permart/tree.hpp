// PermART internals of the keys=u64 layout: the tree class behind the
// `permart` entry when created with keys=u64 (the default). See permart.hpp
// for the design and core.hpp for what both layouts share.
#pragma once

#include <optional>
#include <vector>

#include "art/permart/core.hpp"
#include "art/permart/leaf.hpp"

namespace pmindex::art::permart::detail {

class tree final : public u64_index, protected core {
 public:
  tree(pm::pool& p, open_kind k, const index_config& cfg, bool log);

  bool insert(uint64_t key, uint64_t value) override { return write(op::insert, key, value); }
  bool update(uint64_t key, uint64_t value) override { return write(op::update, key, value); }
  bool upsert(uint64_t key, uint64_t value) override { return write(op::upsert, key, value); }
  bool remove(uint64_t key) override { return write(op::remove, key, 0); }
  std::optional<uint64_t> lookup(uint64_t key) override;
  size_t scan(uint64_t from, size_t count, record* out) override;
  size_t range(uint64_t lo, uint64_t hi, std::vector<record>& out) override;

  check_result check() override;
  void close() override;
  void trace(pm::pool::trace_sink& sink) override;
  index_stats stats() override;

 private:
  // clear_link: null the slot of `key` if it holds a version link stamped
  // <= `value` (core::clear_links).
  enum class op { insert, update, upsert, remove, clear_link };

  static uint64_t block_size(const header* h) {
    return h->kind == uint8_t(kind::leaf) ? leaf_block_size(h) : inner_size(h->kind);
  }
  // f(slot) for each slot of an inner node (core's walks).
  static constexpr auto child_slots = [](header* h, auto&& f) {
    each_child(h, [&](unsigned, uint64_t* s) {
      f(s);
      return true;
    });
  };

  // --- leaves (read.cpp): the pairs of a leaf with its log entries applied,
  // all settled ones (current) or those stamped <= ts; sorted, <= k_max_view.
  unsigned leaf_view(header* h, pair* out, uint64_t ts, bool current) const;

  // --- scans (read.cpp): a breadth-first walk at one snapshot stamp.
  // `seed` lists, in key order, the slots hanging right of the path to the
  // scan's start. Each pass reads its list in order: a slot that holds a
  // leaf at the stamp is read there and then; from the first that holds an
  // inner node on, `expand` puts in each slot's place the leaf found there
  // or the children of the node found there, the next pass's list. Each
  // slot's current node is asked for where the slot is listed, a whole list
  // before the list is read, so a scan waits about once per level (the
  // stamp every slot read checks is in that node's first line), not once
  // per node. A list stops where the records guessed below it fill the
  // walk; a walk that leaves slots out ("cut") is followed by another from
  // the first key it left out, at the same stamp: the scan stays one
  // snapshot.
  static constexpr size_t k_batch = 4096;  // records a walk lists for
  struct walk_list {
    uintptr_t* e;   // a slot (bit 0 clear) or a leaf read at the stamp (its header | 1)
    uint64_t* min;  // the smallest key entry i may hold (increasing)
    size_t n = 0, guessed = 0, slots = 0, want = 0;  // slots: entries that are slots
    bool full() const { return guessed >= want; }
  };
  struct walk_state {
    uint64_t from, hi, ts;
    uint64_t cut_at;  // the first key left out of this walk (~0: none)
    walk_list now, next;
  };
  void seed(uint64_t v, walk_state& s) const;
  void expand(walk_state& s, size_t i) const;
  // Lists n's children with key byte >= b (and keys <= s.hi) into g while
  // it is not full; `model`: a sibling of theirs (null: a full node's first
  // child in range, a listed node's none).
  void list_children(header* n, unsigned b, const header* model, walk_state& s, walk_list& g) const;
  static slot_guess guess_from(const header* model);  // core::guess_from for this layout
  // Leaf h into g; its records guessed: its pairs (a logged leaf's base
  // pairs), but those below the walk's start in the first leaf (the only
  // entry whose min is the start: the others' sort after it). A guess too
  // high cuts a walk short.
  static void list_leaf(header* h, uint64_t min, const walk_state& s, walk_list& g) {
    const unsigned below = min == s.from ? lower_bound(leaf_pairs(h), h->count, min) : 0;
    g.e[g.n] = reinterpret_cast<uintptr_t>(h) | 1;
    g.min[g.n++] = min;
    g.guessed += h->count > below ? h->count - below : 1;
  }
  // A leaf's pairs in [lo, hi] as of ts. Inlined into the scan's last pass
  // (a call per record was a fifth of a scan in cache: scan100 1.25x on a
  // hot set); the view of a logged leaf, with its stack array, out of line.
  template <class Sink>
  [[gnu::always_inline]] inline bool visit_leaf(header* n, uint64_t lo, uint64_t hi, uint64_t ts, Sink& sink) const;
  template <class Sink>
  [[gnu::noinline]] bool visit_logged_leaf(header* n, uint64_t lo, uint64_t hi, uint64_t ts, Sink& sink) const;
  template <class Sink>
  void snapshot(uint64_t lo, uint64_t hi, Sink& sink);

  // --- writes (write.cpp)
  bool write(op o, uint64_t key, uint64_t value);
  void clear_noted_links(bool all);                   // core::clear_links over this layout
  int try_write(op o, uint64_t key, uint64_t value);  // -1: restart
  int write_leaf(op o, header* parent, uint64_t* slot, uint64_t raw, uint64_t key, uint64_t value);
  uint64_t new_leaf(fresh_blocks& fb, const pair* kv, unsigned n);
  uint64_t new_inner(fresh_blocks& fb, unsigned depth, uint64_t prefix, const entry* e, unsigned n);
  void append_log(log_leaf* l, unsigned j, uint64_t key, uint64_t value, bool del);

  // --- recovery and walks (tree.cpp)
  void recover_slot(uint64_t* slot, int parent_depth);
  std::string check_slot(uint64_t* slot, int parent_depth, uint64_t path, uint64_t& records,
                         uint64_t& prev_key, bool& any);
};

}  // namespace pmindex::art::permart::detail

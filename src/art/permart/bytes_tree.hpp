// PermART internals of the keys=bytes layout: the tree class behind the
// `permart` entry when created with keys=bytes. See permart.hpp for the
// design, bytes_node.hpp for the layout and core.hpp for what both layouts
// share.
#pragma once

#include <algorithm>
#include <string>
#include <string_view>

#include "art/permart/bytes_node.hpp"

namespace pmindex::art::permart::detail {

class bytes_tree final : public bytes_index, protected core {
 public:
  bytes_tree(pm::pool& p, open_kind k, const index_config& cfg, bool log);

  using bytes_index::insert, bytes_index::update, bytes_index::upsert, bytes_index::remove, bytes_index::lookup,
      bytes_index::scan, bytes_index::range;
  bool insert(std::string_view key, std::string_view value) override { return write(op::insert, key, value); }
  bool update(std::string_view key, std::string_view value) override { return write(op::update, key, value); }
  bool upsert(std::string_view key, std::string_view value) override { return write(op::upsert, key, value); }
  bool remove(std::string_view key) override { return write(op::remove, key, {}); }
  bool lookup(std::string_view key, std::string* value) override;
  size_t scan(std::string_view from, size_t count, record_buffer& out) override;
  size_t range(std::string_view lo, std::string_view hi, record_buffer& out) override;

  check_result check() override;
  void close() override;
  void trace(pm::pool::trace_sink& sink) override;
  index_stats stats() override;

 private:
  // clear_link: null the slot of `key` if it holds a version link stamped
  // <= clear_stamp (core::clear_links).
  enum class op { insert, update, upsert, remove, clear_link };
  // A scan's bounds: keys in [lo, hi] (no upper bound without has_hi).
  struct bounds {
    std::string_view lo, hi;
    bool has_hi;
  };

  uint64_t block_size(const header* h) const {
    return h->kind == uint8_t(kind::leaf) ? bleaf_block_size(h) : binner_size(h->kind, bdepth(h));
  }
  // Slots of an inner node in key order, the end slot first.
  template <class F>
  static bool each_slot(header* n, F&& f) {
    return f(-1, &btail(n)->end) && each_child(n, [&](unsigned b, uint64_t* s) { return f(int(b), s); });
  }

  static constexpr auto all_slots = [](header* h, auto&& f) {  // f(slot) for each slot (core's walks)
    each_slot(h, [&](int, uint64_t* s) {
      f(s);
      return true;
    });
  };

  // --- leaves (bytes_read.cpp): as tree::leaf_view, for byte pairs
  unsigned leaf_view(header* h, bpair* out, uint64_t ts, bool current) const;

  // --- reads (bytes_read.cpp)
  // Scans and ranges: a breadth-first walk at one snapshot stamp, as
  // tree.hpp's (see there), but each pass expands the whole list (a slot
  // into the leaf it holds at the stamp, or the end slot and children of
  // the node it holds) and the leaves are read after the last one; a walk
  // cut short is followed by one from right after the last key it read, at
  // the same stamp: the scan stays one snapshot.
  static constexpr size_t k_batch = 4096;  // records a walk lists for
  struct walk_list {
    uintptr_t* e;  // a slot (bit 0 clear) or a leaf read at the stamp (its header | 1)
    size_t n = 0, guessed = 0, slots = 0, want = 0;  // slots: entries that are slots
    bool cut = false;                                // an entry was left out
    bool full() const { return guessed >= want; }
  };
  static slot_guess guess_from(const header* model);  // core::guess_from for this layout
  // Inner node n's end slot (with_end) and its children with key byte >= b
  // into g while it is not full; `model`: a sibling of the children (null:
  // a full node's first child, a listed node's none).
  void list_slots(header* n, bool with_end, unsigned b, const header* model, walk_list& g) const;
  void seed(std::string_view from, uint64_t root, uint64_t ts, walk_list& f, const header*& tight) const;
  bool expand(const walk_list& f, walk_list& g, uint64_t ts) const;
  template <class Sink>
  bool batch(const bounds& b, size_t want, uint64_t root, uint64_t ts, Sink& sink, bool& cut) const;
  template <class Sink, class Next>
  void walks(bounds b, size_t want, Sink& sink, const record_buffer& out, Next next_want);
  template <class Sink>
  bool visit_leaf(header* n, const bounds& b, bool lo_tight, bool hi_tight, uint64_t ts, Sink& sink) const;

  // --- writes (bytes_write.cpp)
  bool write(op o, std::string_view key, std::string_view value);
  void clear_noted_links(bool all);  // core::clear_links over this layout
  int try_write(op o, const bkey& key, std::string_view value, uint64_t clear_stamp = 0);  // -1: restart
  int write_leaf(op o, header* parent, uint64_t* slot, uint64_t raw, const bkey& key, std::string_view value);
  uint64_t new_block(fresh_blocks& fb, std::string_view key, std::string_view value);
  bpair new_pair(fresh_blocks& fb, const bkey& key, std::string_view value);
  void set_value(fresh_blocks& fb, bpair& kv, std::string_view value);
  uint64_t new_leaf(fresh_blocks& fb, const bpair* kv, unsigned n);
  uint64_t new_inner(fresh_blocks& fb, uint64_t depth, const char* prefix, const entry* e, unsigned n,
                     uint64_t end);
  uint64_t split(fresh_blocks& fb, const bpair* kv, unsigned n);
  void retire_dropped(header* old_leaf, const bpair* kept, unsigned n);

  // --- recovery and walks (bytes_tree.cpp)
  void recover_slot(uint64_t* slot, int64_t parent_depth);
  void recover_pair(const bpair& kv);
  template <class F>
  void each_block(header* leaf, F&& f);  // the kv blocks a leaf owns, once each
  std::string check_slot(uint64_t* slot, int64_t parent_depth, std::string& path, uint64_t& records,
                         std::string& prev_key, bool& any);
  std::string check_leaf(header* h, std::string_view path, bool end_slot, uint64_t& records,
                         std::string& prev_key, bool& any);

  pair_reader rd_;
};

// The kv blocks leaf h names, each once: those of its base pairs and of its
// valid log entries (a superseded value block stays the leaf's until the
// leaf is replaced; a removed key's block too: its delete entry names it).
template <class F>
void bytes_tree::each_block(header* h, F&& f) {
  uint64_t seen[2 * (k_bbig_leaf + 2)];
  unsigned ns = 0;
  auto add = [&](uint64_t b) {
    if (!b || std::find(seen, seen + ns, b) != seen + ns) return;
    seen[ns++] = b;
    f(b);
  };
  auto pair_blocks = [&](const bpair& kv) {
    add(pair_reader::key_block(kv));
    add(pair_reader::value_block(kv));
  };
  const bpair* kv = bleaf_pairs(h);
  for (unsigned i = 0; i < h->count; ++i) pair_blocks(kv[i]);
  if (leaf_logged(h))
    for (auto& e : reinterpret_cast<blog_leaf*>(h)->log)
      if (load_acq(&e.meta) & k_log_valid) pair_blocks(e.kv);
}

}  // namespace pmindex::art::permart::detail

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

  // --- reads (read.cpp)
  template <class Sink>
  bool visit(uint64_t v, uint64_t lo, uint64_t hi, uint64_t ts, Sink& sink) const;
  // A leaf's pairs in [lo, hi] as of ts. Inlined into the walk of its
  // parent (a call per record was a fifth of a scan in cache: scan100 1.25x
  // on a hot set, 1.05x at 1M uniform); the view of
  // a logged leaf, with its stack array, out of line.
  template <class Sink>
  [[gnu::always_inline]] inline bool visit_leaf(header* n, uint64_t lo, uint64_t hi, uint64_t ts, Sink& sink) const;
  template <class Sink>
  [[gnu::noinline]] bool visit_logged_leaf(header* n, uint64_t lo, uint64_t hi, uint64_t ts, Sink& sink) const;
  size_t children_ahead(header* n, unsigned from, unsigned last, size_t wanted) const;
  static constexpr size_t k_inner_ahead = 4;  // inner children of a full node asked for at once (scans)
  // A listed node's lines after its first (`all`), or its children up to
  // `budget` (!all): what a scan will read there, asked for a visit or two
  // before it gets there (visit()). Other nodes: nothing. A hint. (A walk
  // of a node whose children were all asked for here asks for them again:
  // telling it not to measured no faster.)
  void ask_listed(uint64_t v, bool all, size_t budget) const;
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

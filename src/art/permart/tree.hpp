// PermART internals shared by the source files of src/art/permart/: the tree
// class behind the `permart` index entry. See permart.hpp for the design.
#pragma once

#include <cstring>
#include <optional>
#include <vector>

#include "common/mutant.hpp"
#include "art/permart/full.hpp"
#include "art/permart/indirect.hpp"
#include "art/permart/leaf.hpp"
#include "art/permart/node.hpp"
#include "art/permart/sparse.hpp"
#include "art/permart/permart.hpp"
#include "pmindex/sync/version_lock.hpp"
#include "pmindex/sync/versioned_ptr.hpp"

namespace pmindex::art::permart::detail {

template <class T>
inline T load_acq(const T* p) {
  return __atomic_load_n(p, __ATOMIC_ACQUIRE);
}
template <class T>
inline void store_rel(T* p, T v) {
  __atomic_store_n(p, v, __ATOMIC_RELEASE);
}

// A child of an inner node while building one: key byte and slot value.
struct entry {
  unsigned byte;
  uint64_t value;
};

// Blocks allocated for one write: freed again unless the write commits
// (a full pool then fails the operation and changes nothing). A remove may
// dip into the pool's reserve: it gives back more than it takes.
class fresh_blocks {
 public:
  explicit fresh_blocks(pm::pool& p, bool frees_space = false) : p_(p), reserve_(frees_space) {}
  ~fresh_blocks() {
    for (unsigned i = 0; i < n_; ++i) p_.free(offs_[i]);
  }
  uint64_t alloc(size_t size) {
    uint64_t o = reserve_ ? p_.alloc_reserve_or_throw(size) : p_.alloc_or_throw(size);
    offs_[n_++] = o;
    return o;
  }
  uint64_t try_alloc(size_t size) {
    uint64_t o = p_.alloc(size);
    if (o) offs_[n_++] = o;
    return o;
  }
  void commit() { n_ = 0; }

 private:
  pm::pool& p_;
  bool reserve_;
  uint64_t offs_[20];
  unsigned n_ = 0;
};

class tree final : public u64_index {
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
  void trace(pm::pool::trace_sink& sink) override;
  index_stats stats() override;

 private:
  enum class op { insert, update, upsert, remove };

  header* hdr(uint64_t v) const { return p_.ptr<header>(untag(v)); }
  static uint64_t block_size(const header* h);

  // Children of an inner node in key order: f(byte, slot) -> false stops.
  template <class F>
  static bool each_child(header* n, F&& f);
  static uint64_t* find_child(header* n, unsigned b);

  // --- leaves (read.cpp): the pairs of a leaf with its log entries applied,
  // all settled ones (current) or those stamped <= ts; sorted, <= k_max_view.
  unsigned leaf_view(header* h, pair* out, uint64_t ts, bool current) const;

  // --- slot reads (read.cpp)
  uint64_t load_current(uint64_t* slot) const;        // raw value, stamp settled
  uint64_t load_at(uint64_t* slot, uint64_t ts) const;  // node at ts, or 0
  template <class Sink>
  bool visit(uint64_t v, uint64_t lo, uint64_t hi, uint64_t ts, Sink& sink) const;
  template <class Sink>
  void snapshot(uint64_t lo, uint64_t hi, Sink& sink);

  // --- writes (write.cpp)
  bool write(op o, uint64_t key, uint64_t value);
  int try_write(op o, uint64_t key, uint64_t value);  // -1: restart
  int write_leaf(op o, header* parent, uint64_t* slot, uint64_t raw, uint64_t key, uint64_t value);
  uint64_t new_leaf(fresh_blocks& fb, const pair* kv, unsigned n);
  uint64_t new_inner(fresh_blocks& fb, unsigned depth, uint64_t prefix, const entry* e, unsigned n);
  uint64_t new_link(fresh_blocks& fb);
  void refill_spare();
  void append_log(log_leaf* l, unsigned j, uint64_t key, uint64_t value, bool del);
  void replace(uint64_t* slot, uint64_t old_raw, uint64_t new_raw, bool retire_old);

  // --- recovery and walks (tree.cpp)
  void recover_slot(uint64_t* slot, int parent_depth);
  std::string check_slot(uint64_t* slot, int parent_depth, uint64_t path, uint64_t& records,
                         uint64_t& prev_key, bool& any);

  pm::pool& p_;
  root* root_ = nullptr;
  mutable sync::stamp_clock clock_;
  common::mutant_switch<mutant> mut_;
  bool log_ = false;  // PermART (2-Log): big leaves carry two log entries
};

template <class F>
bool tree::each_child(header* n, F&& f) {
  switch (static_cast<kind>(n->kind)) {
    case kind::sparse: {
      auto* s = reinterpret_cast<sparse*>(n);
      for (unsigned i = 0; i < s->h.count; ++i)
        if (!f(s->keys[i], &s->slots[i])) return false;
      return true;
    }
    case kind::indirect: {
      auto* s = reinterpret_cast<indirect*>(n);
      unsigned r = 0;
      for (unsigned w = 0; w < 4; ++w)
        for (uint64_t bits = s->bits[w]; bits; bits &= bits - 1)
          if (!f(w * 64 + __builtin_ctzll(bits), &s->slots[r++])) return false;
      return true;
    }
    case kind::full: {
      auto* s = reinterpret_cast<full*>(n);
      for (unsigned b = 0; b < 256; ++b)
        if (!f(b, &s->slots[b])) return false;
      return true;
    }
    default: return true;
  }
}

inline uint64_t* tree::find_child(header* n, unsigned b) {
  switch (static_cast<kind>(n->kind)) {
    case kind::sparse: return sparse_find(reinterpret_cast<sparse*>(n), b);
    case kind::indirect: return indirect_find(reinterpret_cast<indirect*>(n), b);
    case kind::full: return full_find(reinterpret_cast<full*>(n), b);
    default: return nullptr;
  }
}

inline uint64_t tree::block_size(const header* h) {
  switch (static_cast<kind>(h->kind)) {
    case kind::leaf: return leaf_block_size(h);
    case kind::sparse: return sizeof(sparse);
    case kind::indirect: return sizeof(indirect);
    case kind::full: return sizeof(full);
    default: return 0;
  }
}

}  // namespace pmindex::art::permart::detail

// P-Masstree (see pmasstree.hpp): open and recovery, permutation words, lock
// words, the descent to a leaf, and the public calls of both key kinds.
#include <algorithm>
#include <cstddef>
#include <thread>

#include "masstree/pmasstree/pmasstree.hpp"
#include "common/full_pool.hpp"
#include "common/root_block.hpp"

namespace pmindex::masstree::pmasstree {

using common::load_acq;
using common::store_rel;

// ---------------------------------------------------------------- permutations

namespace {
struct nibbles {
  uint8_t a[k_width];
  explicit nibbles(perm_t p) noexcept {
    for (unsigned i = 0; i < k_width; ++i) a[i] = uint8_t(p[i]);
  }
  perm_t word(unsigned n) const noexcept {
    uint64_t w = n;
    for (unsigned i = 0; i < k_width; ++i) w |= uint64_t(a[i]) << (4 * i + 4);
    return {w};
  }
  void move(unsigned from, unsigned to) noexcept {  // a[from] to index `to`, the others shifted
    uint8_t s = a[from];
    if (from < to)
      std::memmove(a + from, a + from + 1, to - from);
    else
      std::memmove(a + to + 1, a + to, from - to);
    a[to] = s;
  }
};
}  // namespace

perm_t perm_t::inserted(unsigned pos) const noexcept {
  nibbles n(*this);
  n.move(size(), pos);
  return n.word(size() + 1);
}

perm_t perm_t::removed(unsigned pos) const noexcept {
  nibbles n(*this);
  n.move(pos, size() - 1);
  return n.word(size() - 1);
}

// ---------------------------------------------------------------- open

template <bool Bytes>
tree<Bytes>::tree(pm::pool& p, open_kind kind, const index_config& cfg) : bytes_index(p), p_(p), mut_(cfg) {
  leaf_cap_ = unsigned(cfg.u64("leaf"));
  inner_cap_ = unsigned(cfg.u64("inner"));
  if (kind == open_kind::created) {
    uint64_t first = new_leaf(0, make_ikey(0, 0));
    p_.flush(at(first), sizeof(leaf));  // the create_root persist fences it
    root_ = common::create_root<root_block>(p_, k_magic, [&](root_block& r) {
      r.gen = gen_;
      r.root = first;
      r.leaf_width = leaf_cap_;
      r.inner_width = inner_cap_;
    });
    return;
  }
  root_ = common::attach_root<root_block>(p_, k_magic, "pmasstree");
  if (root_->leaf_width != leaf_cap_ || root_->inner_width != inner_cap_)
    corrupt("node widths in the pool do not match its parameters");
  uint64_t g = root_->gen + 1;
  if (uint32_t(g) == 0) ++g;  // 0 is never a generation
  p_.store_persist(&root_->gen, g);
  gen_ = uint32_t(g);
  if (kind == open_kind::dirty) {
    // The only repair: leaves a split left with copies of their right
    // neighbour. Then the whole trie is validated before tracing follows it.
    clip_layer(root_->root, 0);
    recovering_ = true;
    auto c = check();
    recovering_ = false;
    if (!c.ok) throw error(errc::corrupt, c.message);
  }
}

template <bool Bytes>
tree<Bytes>::~tree() = default;

template <bool Bytes>
uint64_t tree<Bytes>::new_leaf(uint64_t next, ikey low) {
  uint64_t off = p_.alloc_or_throw(sizeof(leaf));
  leaf* l = at(off);
  std::memset(static_cast<void*>(l), 0, sizeof(leaf));
  l->lock = uint64_t(gen_) << 32;
  l->perm = perm_t::empty().w;
  l->kind = k_leaf;
  l->next = next;
  l->low_slice = slice_of(low);
  l->low_cls = class_of(low);
  return off;
}

// ---------------------------------------------------------------- lock words

template <bool Bytes>
void tree<Bytes>::wait_held(unsigned& spins, const leaf* l, uint64_t w) const {
  passes_.wait(spins, [&] { return load_acq(&l->lock) == w; },
               "pmasstree: a leaf's lock word is held by no writer (damaged pool)", p_.thread_slot());
}

template <bool Bytes>
uint64_t tree<Bytes>::read_begin(const leaf* l) const {
  for (unsigned spins = 0;;) {
    uint64_t w = load_acq(&l->lock);
    if (!current(w) || !(w & k_locked)) return w;  // an older generation's word is free
    wait_held(spins, l, w);
  }
}

template <bool Bytes>
void tree<Bytes>::lock(leaf* l) {
  const uint32_t slot = p_.thread_slot();
  for (unsigned spins = 0;;) {
    uint64_t w = load_acq(&l->lock);
    if (current(w) && (w & k_locked)) {
      wait_held(spins, l, w);  // outside a section (common/marker_passes.hpp)
      continue;
    }
    // Lazy reset: the first writer of a generation restarts the word at it.
    uint64_t mine = (current(w) ? w : uint64_t(gen_) << 32) | k_locked;
    if (passes_.take(slot, [&]() noexcept { return common::cas(&l->lock, w, mine); })) return;
  }
}

// ---------------------------------------------------------------- descent

template <bool Bytes>
uint64_t tree<Bytes>::descend(uint64_t root, ikey k, leaf_path* path) const {
  uint64_t off = root & ~k_layer_tag;
  // Inner nodes are immutable: no versions to check on the way down.
  while (kind_of(at<void>(off)) == k_inner) {
    const inner* n = at<inner>(off);
    // Its child words are in its last lines, read after the separators:
    // asked for now, they arrive with them.
    common::prefetch_lines(n, sizeof(inner), 64);
    unsigned nk = unsigned(n->nkeys), i = 0;
    while (i < nk && sep_of(n, i) <= k) ++i;
    if (path) path->push(n, i);
    off = load_acq(&n->child[i]);
  }
  if (path) path->found(off);
  return off;
}

template <bool Bytes>
leaf* tree<Bytes>::settle(leaf* l, ikey k, uint64_t& v) const {
  for (;;) {
    uint64_t ver = read_begin(l);
    if (is_dead(l)) {  // never cleared while the caller is pinned
      l = at(load_acq(&l->slot[0].value));
      continue;
    }
    uint64_t nx = load_acq(&l->next);
    if (nx && k >= low_of(at(nx))) {  // a split its parent does not show (yet, or after a crash)
      if (validate(l, ver)) l = at(nx);
      continue;
    }
    v = ver;
    return l;
  }
}

// A leaf's low bound never changes and its range only shrinks (a split
// gives its upper part to a new leaf on its right), so the leaf the descent
// found is the key's leaf or one to the left of it: under the lock, move
// right while the next leaf's low bound is <= k. One lock at a time.
template <bool Bytes>
leaf* tree<Bytes>::lock_leaf(uint64_t root, ikey k) {
  uint64_t v;
  leaf* l = locate(root, k, v);
  if (mut_.on(mutant::no_recheck)) {
    // The window between the descent and the lock is a few instructions;
    // the mutant widens it so that short runs on 2 cores land a split in it.
    std::this_thread::yield();
    lock(l);
    return l;
  }
  // The mutant widens the window between the descent and the lock, in
  // which a remove may drop the leaf, so that short runs on 2 cores land
  // one in it.
  if (mut_.on(mutant::dead_trusted)) std::this_thread::yield();
  for (;;) {
    lock(l);
    if (is_dead(l) && !mut_.on(mutant::dead_trusted)) {  // dropped since it was read: on from its left
      unlock(l);
      l = at(l->slot[0].value);
      continue;
    }
    const uint64_t nx = l->next;
    if (!nx || k < low_of(at(nx))) return l;
    unlock(l);
    l = at(nx);
  }
}

template <bool Bytes>
uint64_t tree<Bytes>::layer_root(const probe& k, size_t d) const {
  uint64_t root = load_acq(&root_->root);
  for (size_t i = 0; i < d;) {
    const ikey ik = k.at(i);
    uint64_t v;
    const leaf* l = locate(root, ik, v);
    perm_t pm{load_acq(&l->perm)};
    unsigned ins;
    int pos = find(l, pm, ik, &ins);
    uint64_t w = pos >= 0 ? load_acq(&l->slot[pm[unsigned(pos)]].value) : 0;
    if (!validate(l, v)) continue;
    // Layers are never removed: the entry that names layer i + 1 stays.
    PMINDEX_ASSERT(pos >= 0 && class_of(ik) == k_more && (w & k_layer_tag));
    root = w;
    ++i;
  }
  return root;
}

template <bool Bytes>
int tree<Bytes>::find(const leaf* l, perm_t pm, ikey k, unsigned* ins) noexcept {
  unsigned n = std::min(pm.size(), k_width);
  for (unsigned i = 0; i < n; ++i) {
    ikey e = slot_key(l, pm[i]);
    if (e == k) return int(i);
    if (e > k) {
      *ins = i;
      return -1;
    }
  }
  *ins = n;
  return -1;
}

template <bool Bytes>
unsigned tree<Bytes>::visible(const leaf* l, perm_t pm, uint64_t nx) const noexcept {
  unsigned n = std::min(pm.size(), k_width);
  if (!nx) return n;
  ikey hi = low_of(at(nx));
  unsigned i = 0;
  while (i < n && slot_key(l, pm[i]) < hi) ++i;
  return i;
}

// ---------------------------------------------------------------- calls

// The u64 calls: native with keys=u64, through the byte calls with keys=bytes.
template <bool Bytes>
bool tree<Bytes>::insert(uint64_t k, uint64_t v) {
  if constexpr (Bytes) {
    return bytes_index::insert(k, v);
  } else {
    return common::retry_when_full(p_, [&] {  // splits allocate; emptied leaves are retired
      auto g = p_.pin();
      uint64_t old;
      return write(probe{k, {}}, v, k_insert, old);
    });
  }
}

template <bool Bytes>
bool tree<Bytes>::update(uint64_t k, uint64_t v) {
  if constexpr (Bytes) {
    return bytes_index::update(k, v);
  } else {
    auto g = p_.pin();
    uint64_t old;
    return write(probe{k, {}}, v, k_update, old);
  }
}

template <bool Bytes>
bool tree<Bytes>::remove(uint64_t k) {
  if constexpr (Bytes) {
    return bytes_index::remove(k);
  } else {
    auto g = p_.pin();
    uint64_t old;
    return write(probe{k, {}}, 0, k_remove, old);
  }
}

template <bool Bytes>
std::optional<uint64_t> tree<Bytes>::lookup(uint64_t k) {
  if constexpr (Bytes) {
    return bytes_index::lookup(k);
  } else {
    auto g = p_.pin();
    const ikey ik = make_ikey(k, 8);
    for (;;) {
      uint64_t v;
      const leaf* l = locate(load_acq(&root_->root), ik, v);
      perm_t pm{load_acq(&l->perm)};
      unsigned ins;
      int pos = find(l, pm, ik, &ins);
      uint64_t val = pos >= 0 ? load_acq(&l->slot[pm[unsigned(pos)]].value) : 0;
      if (validate(l, v)) return pos >= 0 ? std::optional<uint64_t>(val) : std::nullopt;
    }
  }
}

// keys=bytes: a new record block (written and flushed before any lock); the
// insert's fence before its permutation store, or the update's before its
// swing, makes it durable first. A block never published is freed at once;
// a replaced or removed one is retired.
template <bool Bytes>
bool tree<Bytes>::put_bytes(std::string_view k, std::string_view v, op o) {
  check_key(k);
  check_value(v);
  if constexpr (!Bytes) {
    return o == k_insert ? insert(key_u64(k), value_u64(v)) : update(key_u64(k), value_u64(v));
  } else {
    return common::publish_kv_block(p_, k, v, [&](uint64_t kv, uint64_t& old) { return write(probe{0, k}, kv, o, old); });
  }
}

template <bool Bytes>
bool tree<Bytes>::insert(std::string_view k, std::string_view v) {
  return put_bytes(k, v, k_insert);
}

template <bool Bytes>
bool tree<Bytes>::update(std::string_view k, std::string_view v) {
  return put_bytes(k, v, k_update);
}

template <bool Bytes>
bool tree<Bytes>::remove(std::string_view k) {
  check_key(k);
  if constexpr (!Bytes) {
    return remove(key_u64(k));
  } else {
    return common::unlink_kv_block(p_, [&](uint64_t& old) { return write(probe{0, k}, 0, k_remove, old); });
  }
}

template <bool Bytes>
bool tree<Bytes>::lookup(std::string_view k, std::string* v) {
  check_key(k);
  if constexpr (!Bytes) {
    auto r = lookup(key_u64(k));
    if (r && v) v->assign(value_bytes(*r));
    return r.has_value();
  } else {
    auto g = p_.pin();
    uint64_t kv = find_record(probe{0, k});
    if (kv && v) v->assign(common::kv_value(p_, kv));  // blocks are immutable and pinned
    return kv != 0;
  }
}

template <bool Bytes>
uint64_t tree<Bytes>::find_record(const probe& k) const {
  uint64_t root = load_acq(&root_->root);
  for (size_t d = 0;;) {
    const ikey ik = k.at(d);
    uint64_t v;
    const leaf* l = locate(root, ik, v);
    perm_t pm{load_acq(&l->perm)};
    unsigned ins;
    int pos = find(l, pm, ik, &ins);
    uint64_t w = pos >= 0 ? load_acq(&l->slot[pm[unsigned(pos)]].value) : 0;
    if (!validate(l, v)) continue;
    if (pos < 0) return 0;
    if (class_of(ik) != k_more) return w;
    if (!(w & k_layer_tag)) return common::kv_key(p_, w) == k.s ? w : 0;  // a suffix entry
    root = w & ~k_layer_tag;  // the next layer (layers are never freed)
    ++d;
  }
}

template class tree<false>;
template class tree<true>;

}  // namespace pmindex::masstree::pmasstree

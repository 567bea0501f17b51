// ROART writers: insert, upsert, update, remove, leaf-array splits, node
// growth and prefix splits (see roart.hpp for the commit words and costs).
// Writers hold the tree lock shared (scans hold it exclusively) and, around
// each commit store and its flush, the lock word of the node holding the
// word (and of the parent when a node is replaced), so a lookup or another
// writer that read the old state fails its validation, and none returns the
// new state before it is durable. Every change is built aside,
// flushed, and committed by one 8-byte store made durable before return;
// unlinked blocks are retired through the epochs (lookups may hold them).
#include <sched.h>

#include <algorithm>
#include <bit>

#include "art/roart/roart.hpp"
#include "common/atomics.hpp"
#include "common/full_pool.hpp"

namespace pmindex::art::roart {

using common::load_acq;

// Blocks allocated for one write: freed again unless it commits, so a full
// pool fails the operation and changes nothing.
class pending {
 public:
  explicit pending(pm::pool& p) : p_(p) {}
  ~pending() {
    for (unsigned i = 0; i < n_; ++i) p_.free(offs_[i]);
  }
  pending(const pending&) = delete;
  pending& operator=(const pending&) = delete;
  uint64_t alloc(size_t size) {
    uint64_t o = p_.alloc_or_throw(size);
    offs_[n_++] = o;
    return o;
  }
  void commit() { n_ = 0; }

 private:
  pm::pool& p_;
  uint64_t offs_[260];  // a split: up to 256 leaf arrays and one node
  unsigned n_ = 0;
};

namespace {

kind kind_for(unsigned children) {
  return children <= 4 ? kind::n4 : children <= 16 ? kind::n16 : children <= 48 ? kind::n48 : kind::n256;
}

// The word that replaces node word `old` in its parent: the parent's key
// byte (bits 48..63) kept, the node and its tag new.
uint64_t rewire(uint64_t old, uint64_t off, uint64_t tag) { return (old & ~((uint64_t{1} << 48) - 1)) | off | tag; }

}  // namespace

// ---------------------------------------------------------------- blocks

uint64_t tree::new_leaf(pending& pb, std::string_view key, std::string_view value) {
  uint64_t n = common::kv_block_bytes(key.size(), value.size());
  uint64_t off = pb.alloc(n);
  auto* b = p_.ptr<common::kv_block>(off);
  b->klen = uint32_t(key.size());
  b->vlen = uint32_t(value.size());
  if (!key.empty()) std::memcpy(b->data, key.data(), key.size());
  if (!value.empty()) std::memcpy(b->data + key.size(), value.data(), value.size());
  if (!mut_.on(mutant::leaf_unflushed)) p_.flush(b, n);
  return off;
}

uint64_t tree::new_array(pending& pb, unsigned level) {
  uint64_t off = pb.alloc(sizeof(leaf_array));
  auto* a = p_.ptr<leaf_array>(off);
  std::memset(static_cast<void*>(a), 0, sizeof(leaf_array));
  a->lock = uint64_t(gen_) << 32;
  a->level = level;
  return off | k_tag_array;
}

uint64_t tree::new_inner(pending& pb, kind k, unsigned level, const char* prefix, unsigned nprefix) {
  size_t size = inner_size(k, nprefix);
  uint64_t off = pb.alloc(size);
  auto* n = p_.ptr<inner>(off);
  std::memset(static_cast<void*>(n), 0, size);
  n->lock = uint64_t(gen_) << 32;
  n->kind = uint8_t(k);
  n->nprefix = uint16_t(nprefix);
  n->level = level;
  if (nprefix) std::memcpy(const_cast<char*>(prefix_of(n)), prefix, nprefix);
  return off | k_tag_inner;
}

// Child word c (its byte in bits 48..55) into node n, which has room.
void tree::place(inner* n, uint64_t c) {
  auto k = static_cast<kind>(n->kind);
  if (k == kind::n256) {
    n->child[byte_of(c)] = c;
    return;
  }
  unsigned j = 0;
  while (n->child[j]) ++j;
  n->child[j] = c;
  if (k == kind::n48) n48_index(n)[byte_of(c)] = uint8_t(j + 1);
}

// Commits `v` into `word`: the fence makes the blocks flushed before durable
// first, then the store, flushed and fenced.
void tree::swing(uint64_t* word, uint64_t v) {
  p_.fence();
  common::store_rel(word, v);
  p_.persist(word, 8);
}

// ---------------------------------------------------------------- insert / update / remove

bool tree::insert(std::string_view key, std::string_view value) { return put(key, value, k_insert); }
bool tree::upsert(std::string_view key, std::string_view value) { return put(key, value, k_upsert); }
bool tree::update(std::string_view key, std::string_view value) { return put(key, value, k_update); }
bool tree::remove(std::string_view key) {
  check_key(key);
  return put(key, {}, k_remove);
}

bool tree::put(std::string_view key, std::string_view value, int mode) {
  if (mode != k_remove) {
    check_key(key);
    check_value(value);
  }
  // Every update and remove retires a leaf: a full pool is retried,
  // unpinned and out of the gate, once they came back (full_pool.hpp).
  return common::retry_when_full(p_, [&] {
    auto pin = p_.pin();
    common::writer_gate::writer in(gate_, p_.thread_slot());  // scans and check() close it
    const void* met = nullptr;  // the last node met obsolete
    for (;;) {
      int r = try_put(key, value, mode, met);
      if (r >= 0) return bool(r);
    }
  });
}

// One optimistic descent (as read(), tree.cpp), then the node(s) to change
// locked by upgrading the versions it read: a failed upgrade means another
// writer came first, and the operation restarts (its blocks are freed).
// Returns the result (1: inserted / updated / removed; for an upsert, 1 only
// if inserted) or -1 to restart (also after a split).
int tree::try_put(std::string_view key, std::string_view value, int mode, const void*& met) {
  pending pb(p_);
  uint64_t* parent = &root_->root;
  uint64_t* plock = &root_lock_;  // the lock word of the node holding *parent
  inner* pnode = nullptr;         // that node (null: the root)
  uint64_t pv = read_version(plock, nullptr, nullptr);
  uint64_t w = load_acq(parent);
  if (!validate(plock, pv)) return -1;
  unsigned pos = 0;
  const unsigned fp = fingerprint(key);
  const bool adds = mode == k_insert || mode == k_upsert;
  for (;;) {
    if (!w) {  // the empty tree
      if (!adds) return 0;
      uint64_t leaf = new_leaf(pb, key, value);
      uint64_t aw = new_array(pb, 0);
      leaf_array* a = array_at(aw);
      a->slot[0] = leaf | uint64_t(fp) << 48;
      a->bitmap = 1;
      p_.flush(a, sizeof(leaf_array));
      if (!upgrade(plock, pv)) return -1;
      swing(parent, aw);
      write_unlock(plock);
      pb.commit();
      return 1;
    }
    if (is_array(w)) {
      leaf_array* a = array_at(w);
      uint64_t v = read_version(&a->lock, a, nullptr);
      if (v & k_obsolete) {
        met_obsolete(met, a);
        return -1;
      }
      int at = -1;
      for (uint64_t bm = __atomic_load_n(&a->bitmap, __ATOMIC_RELAXED); bm; bm &= bm - 1) {
        unsigned i = unsigned(std::countr_zero(bm));
        uint64_t s = load_acq(&a->slot[i]);
        if (s && fp_of(s) == fp && leaf_key(s) == key) {
          at = int(i);
          break;
        }
      }
      if (at >= 0) {  // present
        if (mode == k_insert) return validate(&a->lock, v) ? 0 : -1;
        uint64_t leaf = mode == k_remove ? 0 : new_leaf(pb, key, value) | uint64_t(fp) << 48;
        if (!upgrade(&a->lock, v)) return -1;
        uint64_t old = a->slot[at];
        if (!leaf && a->bitmap == uint64_t{1} << at) {
          // The array's last record: the array goes with it (one 8-byte
          // store of its parent's word, as costly as zeroing the slot), so
          // a pool emptied by removes gets its arrays back for new keys.
          if (!try_upgrade_parent(plock, pv, &a->lock)) return -1;
          unlink_array(pnode, parent, w);
          write_unlock(plock);
          write_obsolete(&a->lock);
          p_.retire(off_of(old));  // the store is durable; lookups may still read both
          p_.retire(off_of(w));
          return 1;
        }
        if (leaf)
          swing(&a->slot[at], leaf);
        else
          p_.store_persist(&a->slot[at], 0);  // a remove: nothing new to order first
        if (!leaf) __atomic_store_n(&a->bitmap, a->bitmap & ~(uint64_t{1} << at), __ATOMIC_RELAXED);
        write_unlock(&a->lock);
        pb.commit();
        p_.retire(off_of(old));  // the swing is durable; lookups may still read it
        return mode != k_upsert;
      }
      if (!adds) return validate(&a->lock, v) ? 0 : -1;
      if (unsigned(std::popcount(__atomic_load_n(&a->bitmap, __ATOMIC_RELAXED))) >= cap_) {
        if (!upgrade(plock, pv)) return -1;
        if (!upgrade(&a->lock, v)) {
          write_unlock(plock);
          return -1;
        }
        try {
          split(plock, parent, w, pos);
        } catch (...) {  // a full pool: nothing changed
          write_unlock(&a->lock);
          write_unlock(plock);
          throw;
        }
        p_.retire(off_of(w));  // (out of the try: it may throw after split() unlocked)
        return -1;
      }
      uint64_t leaf = new_leaf(pb, key, value);
      const bool lock = !mut_.on(mutant::insert_unlocked);
      if (lock && !upgrade(&a->lock, v)) return -1;
      unsigned i = unsigned(std::countr_zero(~__atomic_load_n(&a->bitmap, __ATOMIC_RELAXED)));
      if (!lock) sched_yield();  // the mutant: let a racing insert pick the same slot
      swing(&a->slot[i], leaf | uint64_t(fp) << 48);
      __atomic_store_n(&a->bitmap, a->bitmap | uint64_t{1} << i, __ATOMIC_RELAXED);
      if (lock) write_unlock(&a->lock);
      pb.commit();
      return 1;
    }

    inner* n = inner_at(w);
    uint64_t v = read_version(&n->lock, nullptr, n);
    if (v & k_obsolete) {
      met_obsolete(met, n);
      return -1;
    }
    const unsigned lv = n->level;  // level and prefix never change
    // Where the key leaves the node's prefix [pos, lv), if it does.
    const char* pre = prefix_of(n) + (n->nprefix - (lv - pos));
    unsigned d = pos;
    const unsigned m = unsigned(std::min<size_t>(key.size(), lv));
    while (d < m && key[d] == pre[d - pos]) ++d;
    if (d < lv) {  // prefix split: a new N4 at d above the node
      if (!adds) return validate(&n->lock, v) ? 0 : -1;
      uint64_t leaf = new_leaf(pb, key, value);
      uint64_t nw = new_inner(pb, kind::n4, d, key.data() + pos, d - pos);
      inner* nn = inner_at(nw);
      place(nn, child_word(off_of(w), k_tag_inner, uint8_t(pre[d - pos])));
      if (key.size() == d) {
        nn->eok = leaf;
      } else {
        uint64_t aw = new_array(pb, d + 1);
        leaf_array* a = array_at(aw);
        a->slot[0] = leaf | uint64_t(fp) << 48;
        a->bitmap = 1;
        p_.flush(a, sizeof(leaf_array));
        place(nn, child_word(off_of(aw), k_tag_array, uint8_t(key[d])));
      }
      p_.flush(nn, inner_size(kind::n4, d - pos));
      // The parent's version unchanged: it still names w (which is not
      // changed: it only moves below the new node).
      if (!upgrade(plock, pv)) return -1;
      swing(parent, rewire(w, off_of(nw), k_tag_inner));
      write_unlock(plock);
      pb.commit();
      return 1;
    }
    if (key.size() == lv) {  // the end-of-key record
      uint64_t e = load_acq(&n->eok);
      if (e ? mode == k_insert : !adds) return validate(&n->lock, v) ? 0 : -1;
      uint64_t leaf = mode == k_remove ? 0 : new_leaf(pb, key, value);
      if (!upgrade(&n->lock, v)) return -1;
      if (leaf)
        swing(&n->eok, leaf);
      else
        p_.store_persist(&n->eok, 0);
      write_unlock(&n->lock);
      pb.commit();
      if (e) p_.retire(off_of(e));
      return !e || mode == k_update || mode == k_remove;
    }
    const unsigned b = uint8_t(key[lv]);
    uint64_t* c = find_child(n, b);
    uint64_t cw = c ? load_acq(c) : 0;
    if (!validate(&n->lock, v)) return -1;
    if (cw) {
      parent = c;
      plock = &n->lock;
      pnode = n;
      pv = v;
      w = cw;
      pos = lv + 1;
      continue;
    }
    if (!adds) return 0;
    // A new leaf array for byte b, in a free child slot or a grown node.
    uint64_t leaf = new_leaf(pb, key, value);
    uint64_t aw = new_array(pb, lv + 1);
    leaf_array* a = array_at(aw);
    a->slot[0] = leaf | uint64_t(fp) << 48;
    a->bitmap = 1;
    p_.flush(a, sizeof(leaf_array));
    const uint64_t nc = child_word(off_of(aw), k_tag_array, b);
    auto k = static_cast<kind>(n->kind);
    if (!upgrade(&n->lock, v)) return -1;
    uint64_t* slot = nullptr;
    if (k == kind::n256) {
      slot = &n->child[b];
    } else {
      for (unsigned j = 0; j < capacity(k); ++j)
        if (!n->child[j]) {
          slot = &n->child[j];
          break;
        }
    }
    if (slot) {
      swing(slot, nc);
      if (k == kind::n48) n48_index(n)[b] = uint8_t(slot - n->child + 1);
      write_unlock(&n->lock);
    } else {
      // Full: the parent too (nobody waits holding a lock word: no deadlock).
      if (!try_upgrade_parent(plock, pv, &n->lock)) return -1;
      try {
        grow(pb, plock, parent, w, pos, nc);
      } catch (...) {  // a full pool: nothing changed
        write_unlock(&n->lock);
        write_unlock(plock);
        throw;
      }
      p_.retire(off_of(w));  // (out of the try: it may throw after grow() unlocked)
    }
    pb.commit();
    return 1;
  }
}

// ---------------------------------------------------------------- structure

// Leaf array w, named by *parent (a child word of pnode, or the root word),
// and its one remaining record leave the tree: the word is zeroed durably
// (both locks held), which removes that record. A crash before the store
// leaves the record in, after it both blocks are unreachable and tracing
// frees them. An N48 drops the byte from its (volatile) index; the child
// slot is free for the next new child.
void tree::unlink_array(inner* pnode, uint64_t* parent, uint64_t w) {
  p_.store_persist(parent, 0);
  if (pnode && static_cast<kind>(pnode->kind) == kind::n48) n48_index(pnode)[byte_of(w)] = 0;
}

// Node w (found at pos) is full: a node of the next kind with its children
// and child word c replaces it in *parent.
void tree::grow(pending& pb, uint64_t* plock, uint64_t* parent, uint64_t w, unsigned pos, uint64_t c) {
  inner* o = inner_at(w);
  const auto ok = static_cast<kind>(o->kind);
  const auto nk = static_cast<kind>(o->kind + 1);
  const unsigned lv = o->level;
  uint64_t nw = new_inner(pb, nk, lv, prefix_of(o) + (o->nprefix - (lv - pos)), lv - pos);
  inner* n = inner_at(nw);
  n->eok = o->eok;
  for (unsigned j = 0; j < capacity(ok); ++j)
    if (uint64_t x = o->child[j]) place(n, x);
  place(n, c);
  p_.flush(n, inner_size(nk, lv - pos));
  swing(parent, rewire(w, off_of(nw), k_tag_inner));
  write_unlock(plock);
  write_obsolete(&o->lock);  // the caller retires w
}

// The full leaf array w (found at pos) becomes an inner node at the first
// position d where its keys differ (or one ends: that record becomes the
// node's end-of-key record) with one new leaf array per byte at d; the
// leaves are shared, not copied. All flushed, then one swing of *parent.
void tree::split(uint64_t* plock, uint64_t* parent, uint64_t w, unsigned pos) {
  leaf_array* a = array_at(w);
  uint64_t s[k_slots] = {};  // (zeroed: GCC cannot see that a full array has k >= 2)
  unsigned k = 0;
  for (uint64_t bm = a->bitmap; bm; bm &= bm - 1) s[k++] = a->slot[std::countr_zero(bm)];
  PMINDEX_ASSERT(k >= 2);
  const std::string_view k0 = leaf_key(s[0]);
  size_t d = k0.size();
  for (unsigned i = 1; i < k; ++i) {
    std::string_view ki = leaf_key(s[i]);
    size_t m = std::min(d, ki.size()), j = pos;
    while (j < m && k0[j] == ki[j]) ++j;
    d = j;
  }
  bool present[256] = {};
  unsigned distinct = 0;
  for (unsigned i = 0; i < k; ++i) {
    std::string_view ki = leaf_key(s[i]);
    if (ki.size() > d && !present[uint8_t(ki[d])]) {
      present[uint8_t(ki[d])] = true;
      ++distinct;
    }
  }
  pending pb(p_);
  const kind nk = kind_for(distinct);
  uint64_t nw = new_inner(pb, nk, unsigned(d), k0.data() + pos, unsigned(d - pos));
  inner* n = inner_at(nw);
  uint64_t arr[256] = {};
  for (unsigned i = 0; i < k; ++i) {
    std::string_view ki = leaf_key(s[i]);
    if (ki.size() == d) {
      n->eok = off_of(s[i]);
      continue;
    }
    unsigned b = uint8_t(ki[d]);
    if (!arr[b]) arr[b] = new_array(pb, unsigned(d + 1));
    leaf_array* la = array_at(arr[b]);
    unsigned j = unsigned(std::popcount(la->bitmap));  // filled in order; a group has < cap_ records
    PMINDEX_ASSERT(j < k_slots);
    la->slot[j & (k_slots - 1)] = s[i];
    la->bitmap |= uint64_t{1} << j;
  }
  for (unsigned b = 0; b < 256; ++b)
    if (arr[b]) place(n, child_word(off_of(arr[b]), k_tag_array, b));
  auto flush_new = [&] {
    for (unsigned b = 0; b < 256; ++b)
      if (arr[b]) p_.flush(array_at(arr[b]), sizeof(leaf_array));
    p_.flush(n, inner_size(nk, unsigned(d - pos)));
  };
  if (mut_.on(mutant::split_swing_early)) {
    common::store_rel(parent, rewire(w, off_of(nw), k_tag_inner));
    p_.persist(parent, 8);
    flush_new();
    p_.fence();
  } else {
    flush_new();
    swing(parent, rewire(w, off_of(nw), k_tag_inner));
  }
  write_unlock(plock);
  write_obsolete(&a->lock);
  pb.commit();  // the caller retires w
}

}  // namespace pmindex::art::roart

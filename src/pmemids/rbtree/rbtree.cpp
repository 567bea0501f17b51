// pmemids `rbtree`: operations (see rbtree.hpp for the layout and the
// costs). Insert and remove are CLRS's (ch. 13) on a DRAM working set of
// the nodes they touch, with the path in a vector instead of parent
// pointers; commit() then writes the changes (tx) or the copies (persist).
#include "pmemids/rbtree/rbtree.hpp"
#include "pmemids/rbtree/work.hpp"

#include <algorithm>
#include <cstring>
#include <optional>

#include "common/root_block.hpp"

namespace pmindex::pmemids::rbtree {

tree::tree(pm::pool& p, open_kind k, const index_config& c) : p_(p), mut_(c) {
  u64_ = c.keys() == key_kind::u64;
  max_value_ = u64_ ? 8 : static_cast<uint32_t>(c.u64("value"));
  slot_ = value_slot(c);
  kw_ = u64_ ? 8 : 16;
  node_bytes_ = 32 + kw_ + slot_;
  w_ = std::make_unique<work>(work{*this});
  root_ = open_root(p, k, k_root_magic, "rbtree", slot_, u64_, [](root_block&) {});  // an empty tree: 0
  if (root_->tree && !p.valid_block(root_->tree, node_bytes_))
    throw error(errc::corrupt, "rbtree: the root node is outside the heap");
  if (!tx()) p_.keep_for_removes(node_bytes_, k_remove_reserve);
}

tree::~tree() = default;

uint64_t tree::descend(const key& k, std::vector<uint64_t>& path) const {
  path.clear();
  for (uint64_t x = root_->tree; x;) {
    path.push_back(x);
    const key xk = key_at(x);
    if (xk == k) return x;
    x = hdr(x)[k < xk ? 0 : 1];
  }
  return 0;
}

const char* tree::find(key k, uint32_t* n) const {
  for (uint64_t x = root_->tree; x;) {
    const key xk = key_at(x);
    if (xk == k) {
      *n = meta_vlen(meta_at(x));
      return value_at(x);
    }
    x = hdr(x)[k < xk ? 0 : 1];
  }
  return nullptr;
}

bool tree::insert(key k, const char* v, uint32_t n) {
  work& w = *w_;
  std::vector<uint64_t> path;
  if (descend(k, path)) return false;
  std::optional<pm::transaction> tx;
  if (this->tx()) tx.emplace(p_);
  w.reset(tx ? &*tx : nullptr, false);
  w.path = std::move(path);
  for (uint64_t o : w.path) w.index(o);  // every changed node's parent is in the set
  const uint64_t z = tx ? tx->alloc(node_bytes_) : p_.alloc_or_throw(node_bytes_);
  // Until commit() links it, z is this insert's alone: a throw on the way
  // (std::bad_alloc from the working set, pool_full from the copies) frees
  // it (tx: the transaction's abort does).
  try {
    insert_fixup(w, k, v, n, z);
  } catch (...) {
    if (!tx) p_.free(z);
    throw;
  }
  if (tx) tx->commit();
  return true;
}

// insert from its fresh node z on: z's record, the CLRS fix-up on the
// working set, the commit.
void tree::insert_fixup(work& w, key k, const char* v, uint32_t n, uint64_t z) {
  uint64_t* h = hdr(z);
  h[0] = h[1] = 0;
  h[2] = 1;
  h[3] = k.w;
  if (kw_ == 16) h[4] = k.w1;
  meta_at(z) = make_meta(k.len, n);
  if (n) std::memcpy(value_at(z), v, n);
  w.add({z, 0, 0, 1, z, true, true, false});
  auto& P = w.path;
  if (P.empty())
    w.root = z;
  else
    w.set(P.back(), k < key_at(P.back()) ? &work::ent::left : &work::ent::right, z);
  // CLRS RB-INSERT-FIXUP; P[0 .. i) are the ancestors of x.
  uint64_t x = z;
  for (size_t i = P.size(); i > 0 && w.red(P[i - 1]);) {
    uint64_t p = P[i - 1];
    const uint64_t g = P[i - 2];  // p is red, so not the root
    const bool pl = w.left(g) == p;
    const uint64_t u = pl ? w.right(g) : w.left(g);
    if (w.red(u)) {
      w.set_red(p, false);
      w.set_red(u, false);
      w.set_red(g, true);
      x = g;
      i -= 2;
      continue;
    }
    if (x == (pl ? w.right(p) : w.left(p))) {
      w.rotate(p, pl, g);
      std::swap(x, p);
    }
    w.set_red(p, false);
    w.set_red(g, true);
    w.rotate(g, !pl, i >= 3 ? P[i - 3] : 0);
    break;
  }
  w.set_red(w.root, false);
  commit(w);
}

bool tree::remove(key k) {
  work& w = *w_;
  std::vector<uint64_t> path;
  const uint64_t z = descend(k, path);
  if (!z) return false;
  std::optional<pm::transaction> tx;
  if (this->tx()) tx.emplace(p_);
  w.reset(tx ? &*tx : nullptr, true);
  w.path = std::move(path);
  for (uint64_t o : w.path) w.index(o);  // every changed node's parent is in the set
  auto& P = w.path;
  // The node unlinked: z, or (two children) its successor, whose record
  // moves into z.
  uint64_t t = z;
  if (w.left(z) && w.right(z)) {
    t = w.right(z);
    P.push_back(t);
    while (w.left(t)) P.push_back(t = w.left(t));
    w.at(z).rec = t;
    w.at(z).dirty = true;
  }
  P.pop_back();  // now the ancestors of t
  uint64_t x = w.left(t) ? w.left(t) : w.right(t);
  bool xl = !P.empty() && w.left(P.back()) == t;
  w.replace(P.empty() ? 0 : P.back(), t, x);
  w.at(t).dead = true;
  // CLRS RB-DELETE-FIXUP; P[0 .. i) are the ancestors of x (x may be 0).
  if (!w.red(t))
    for (size_t i = P.size(); i > 0 && !w.red(x);) {
      const uint64_t xp = P[i - 1];
      uint64_t s = xl ? w.right(xp) : w.left(xp);
      PMINDEX_ASSERT(s);
      if (w.red(s)) {
        w.set_red(s, false);
        w.set_red(xp, true);
        w.rotate(xp, xl, i >= 2 ? P[i - 2] : 0);
        P.insert(P.begin() + static_cast<std::ptrdiff_t>(i - 1), s);  // s is xp's parent now
        ++i;
        s = xl ? w.right(xp) : w.left(xp);
      }
      uint64_t near = xl ? w.left(s) : w.right(s), far = xl ? w.right(s) : w.left(s);
      if (!w.red(near) && !w.red(far)) {
        w.set_red(s, true);
        x = xp;
        --i;
        if (i > 0) xl = w.left(P[i - 1]) == x;
        continue;
      }
      if (!w.red(far)) {
        w.set_red(near, false);
        w.set_red(s, true);
        w.rotate(s, !xl, xp);
        s = xl ? w.right(xp) : w.left(xp);
        far = xl ? w.right(s) : w.left(s);
      }
      w.set_red(s, w.red(xp));
      w.set_red(xp, false);
      w.set_red(far, false);
      w.rotate(xp, xl, i >= 2 ? P[i - 2] : 0);
      x = w.root;
      break;
    }
  if (x) w.set_red(x, false);
  commit(w);
  if (tx) tx->commit();
  return true;
}

bool tree::update(key k, const char* v, uint32_t n) {
  std::vector<uint64_t> path;
  const uint64_t x = descend(k, path);
  if (!x) return false;
  if (update_in_place(p_, &meta_at(x), k.len, v, n, u64_)) return true;
  // A copy with the new value, linked by the one word that names x.
  const uint64_t y = p_.alloc_or_throw(node_bytes_);
  std::memcpy(hdr(y), hdr(x), 32 + kw_);
  meta_at(y) = make_meta(k.len, n);
  if (n) std::memcpy(value_at(y), v, n);
  p_.persist(hdr(y), 32 + kw_ + n);
  uint64_t* slot = &root_->tree;
  if (path.size() > 1) slot = &hdr(path[path.size() - 2])[hdr(path[path.size() - 2])[0] == x ? 0 : 1];
  p_.store_persist(slot, y);
  p_.free(x);
  return true;
}

}  // namespace pmindex::pmemids::rbtree

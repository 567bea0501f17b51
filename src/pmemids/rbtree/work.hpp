// pmemids `rbtree`: the working set of one insert or remove (rbtree.cpp
// runs the CLRS algorithms on it, commit.cpp writes it back).
#pragma once

#include <algorithm>
#include <cstdint>
#include <vector>

#include "pmemids/rbtree/rbtree.hpp"

namespace pmindex::pmemids::rbtree {

// One operation's view of the nodes it reads and changes.
struct tree::work {
  struct ent {
    uint64_t off, left, right, red;
    uint64_t rec;  // the node whose record this one holds (itself, or a removed node's successor)
    bool dirty, fresh, dead;
  };
  tree& t;
  pm::transaction* tx = nullptr;
  std::vector<ent> e;
  std::vector<uint64_t> path;
  uint64_t root = 0, root0 = 0;
  bool removing = false;  // copies may take the pool's remove reserve

  // off -> position in e + 1 (0: empty), open addressing. The working set
  // is a path or two (~2 log2 n nodes); a linear search made every
  // operation quadratic in the depth.
  std::vector<uint32_t> slots = std::vector<uint32_t>(256);

  void reset(pm::transaction* x, bool remove) {
    tx = x;
    removing = remove;
    std::fill(slots.begin(), slots.end(), 0u);  // 1 KiB: cheaper than probing for each entry
    e.clear();
    path.clear();
    root = root0 = t.root_->tree;
  }
  size_t probe(uint64_t off) const {  // the slot of off, or the empty slot where it would go
    const size_t mask = slots.size() - 1;
    size_t h = static_cast<size_t>((off >> 5) * 0x9e3779b97f4a7c15ull >> 40) & mask;
    while (slots[h] && e[slots[h] - 1].off != off) h = (h + 1) & mask;
    return h;
  }
  // Position of off in e, or SIZE_MAX.
  size_t find(uint64_t off) const {
    const uint32_t s = slots[probe(off)];
    return s ? s - 1 : SIZE_MAX;
  }
  // Adds a node (not in e yet); keeps the table at most half full.
  size_t add(const ent& x) {
    if (2 * (e.size() + 1) > slots.size()) {
      std::vector<uint32_t>(slots.size() * 2).swap(slots);
      for (size_t i = 0; i < e.size(); ++i) slots[probe(e[i].off)] = static_cast<uint32_t>(i + 1);
    }
    e.push_back(x);
    slots[probe(x.off)] = static_cast<uint32_t>(e.size());
    return e.size() - 1;
  }
  size_t index(uint64_t off) {
    const size_t h = probe(off);
    if (slots[h]) return slots[h] - 1;
    const uint64_t* n = t.hdr(off);
    return add({off, n[0], n[1], n[2], off, false, false, false});
  }
  ent& at(uint64_t off) { return e[index(off)]; }
  bool red(uint64_t off) { return off && at(off).red; }
  uint64_t left(uint64_t off) { return at(off).left; }
  uint64_t right(uint64_t off) { return at(off).right; }
  void set(uint64_t off, uint64_t ent::*f, uint64_t v) {
    ent& x = at(off);
    if (x.*f != v) x.*f = v, x.dirty = true;
  }
  void set_red(uint64_t off, bool r) { set(off, &ent::red, r); }
  // parent = 0: the root word.
  void replace(uint64_t parent, uint64_t old, uint64_t nw) {
    if (!parent)
      root = nw;
    else
      set(parent, left(parent) == old ? &ent::left : &ent::right, nw);
  }
  // Rotates x left (its right child goes up) or right, under parent.
  void rotate(uint64_t x, bool to_left, uint64_t parent) {
    const uint64_t y = to_left ? right(x) : left(x);
    if (to_left) {
      set(x, &ent::right, left(y));
      set(y, &ent::left, x);
    } else {
      set(x, &ent::left, right(y));
      set(y, &ent::right, x);
    }
    replace(parent, x, y);
  }
};

}  // namespace pmindex::pmemids::rbtree

// pmemids `rbtree`: the working set of one insert or remove (rbtree.cpp
// runs the CLRS algorithms on it, commit.cpp writes it back).
#pragma once

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

  void reset(pm::transaction* x, bool remove) {
    tx = x;
    removing = remove;
    e.clear();
    path.clear();
    root = root0 = t.root_->tree;
  }
  size_t index(uint64_t off) {
    for (size_t i = 0; i < e.size(); ++i)
      if (e[i].off == off) return i;
    const uint64_t* h = t.hdr(off);
    e.push_back({off, h[0], h[1], h[2], off, false, false, false});
    return e.size() - 1;
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

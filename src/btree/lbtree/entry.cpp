// Registry entry of `lbtree` (see lbtree.hpp): the hybrid B+-tree core
// (btree/detail/entry.hpp) with the LB+-Tree leaf (leaf.hpp).
#include "btree/lbtree/lbtree.hpp"

#include "btree/detail/entry.hpp"
#include "btree/lbtree/leaf.hpp"
#include "builtin_indexes.hpp"

namespace pmindex::btree::lbtree {
namespace {

index_entry make_entry() {
  index_entry e = btree::detail::hybrid_entry<detail::leaf_ops>(
      "lbtree", "LB+-Tree: 256-byte PM leaves, entry moving, logless splits, DRAM inner nodes", "LB+-Tree (VLDB'20)");
  e.params = {{"inner", "separator keys per DRAM inner node", "15", {}, 3, 4096}};
  return e;
}

}  // namespace
}  // namespace pmindex::btree::lbtree

namespace pmindex::builtin {
index_entry lbtree_entry() { return pmindex::btree::lbtree::make_entry(); }
}  // namespace pmindex::builtin

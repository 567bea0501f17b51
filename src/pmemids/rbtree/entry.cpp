// Registry entry of the pmemids `rbtree` (see rbtree.hpp).
#include "pmemids/detail/entry.hpp"
#include "pmemids/rbtree/rbtree.hpp"
#include "builtin_indexes.hpp"

namespace pmindex::pmemids::rbtree {
namespace {

index_entry make_entry() {
  return ordered_entry<tree>(
      "rbtree",
      "pmemids red-black tree: rebalanced on every insert and remove, values in the nodes (persist: copy of the "
      "changed region + 8-byte commit)",
      256, true);
}

}  // namespace
}  // namespace pmindex::pmemids::rbtree

namespace pmindex::builtin {
index_entry rbtree_entry() { return pmindex::pmemids::rbtree::make_entry(); }
}  // namespace pmindex::builtin

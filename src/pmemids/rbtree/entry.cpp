// Registry entry of the pmemids `rbtree` (see rbtree.hpp).
#include "pmemids/detail/entry.hpp"
#include "pmemids/rbtree/rbtree.hpp"
#include "builtin_indexes.hpp"

namespace pmindex::pmemids::rbtree {
namespace {

index_entry make_entry() {
  // Exhaustive over a history that fills 40 keys and empties them (every
  // rotation and recolouring case of insert and remove).
  return ordered_entry<tree>(
      "rbtree",
      "pmemids red-black tree: rebalanced on every insert and remove, values in the nodes (persist: copy of the "
      "changed region + 8-byte commit)",
      256, true,
      {
          crash_mutant("commit_before_flush", "persist: the commit word is stored before the copies are flushed",
                       false),
          crash_mutant("tx_unlogged_color", "tx: node headers (colours, children) changed without saving them", true),
      },
      exhaustive_fill_empty("rbtree", "removes", 120, 40));
}

}  // namespace
}  // namespace pmindex::pmemids::rbtree

namespace pmindex::builtin {
index_entry rbtree_entry() { return pmindex::pmemids::rbtree::make_entry(); }
}  // namespace pmindex::builtin

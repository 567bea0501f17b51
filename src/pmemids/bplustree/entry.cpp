// Registry entry of the pmemids `bplustree` (see bplustree.hpp).
#include "pmemids/bplustree/bplustree.hpp"
#include "pmemids/detail/entry.hpp"
#include "builtin_indexes.hpp"

namespace pmindex::pmemids::bplustree {
namespace {

index_entry make_entry() {
  // Exhaustive over a history that fills 40 keys (16 records a leaf: leaf
  // and root splits) and empties them.
  return ordered_entry<tree>(
      "bplustree", "pmemids B+-tree: 16-record leaves with a slot bitmap (the 8-byte commit), values in the leaves", 256,
      true,
      {
          crash_mutant("bitmap_before_record", "persist: the bitmap bit is stored before the record is flushed", false),
          crash_mutant("tx_unlogged_bitmap", "tx: an insert sets its bitmap bit without saving the old word", true),
          crash_mutant("link_before_flush", "persist: a split links its new nodes before they are flushed", false),
      },
      exhaustive_fill_empty("bplustree", "splits", 120, 40));
}

}  // namespace
}  // namespace pmindex::pmemids::bplustree

namespace pmindex::builtin {
index_entry bplustree_entry() { return pmindex::pmemids::bplustree::make_entry(); }
}  // namespace pmindex::builtin

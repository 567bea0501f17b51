// The tests of `bplustree` (index_tests.hpp): its mutants, in the order of
// its mutant enum, and its test profile; its registry entry is entry.cpp.
#include "pmemids/detail/tests.hpp"

namespace pmindex::builtin {

index_tests bplustree_tests() {
  using namespace pmemids;
  // Exhaustive over a history that fills 40 keys (16 records a leaf: leaf
  // and root splits) and empties them.
  return ordered_tests(
      "bplustree",
      {
          crash_mutant("bitmap_before_record", "persist: the bitmap bit is stored before the record is flushed", false),
          crash_mutant("tx_unlogged_bitmap", "tx: an insert sets its bitmap bit without saving the old word", true),
          crash_mutant("link_before_flush", "persist: a split links its new nodes before they are flushed", false),
      },
      exhaustive_fill_empty("bplustree", "splits", 120, 40));
}

}  // namespace pmindex::builtin

// The tests of `rbtree` (index_tests.hpp): its mutants, in the order of
// its mutant enum, and its test profile; its registry entry is entry.cpp.
#include "pmemids/detail/tests.hpp"

namespace pmindex::builtin {

index_tests rbtree_tests() {
  using namespace pmemids;
  // Exhaustive over a history that fills 40 keys and empties them (every
  // rotation and recolouring case of insert and remove).
  return ordered_tests(
      "rbtree",
      {
          crash_mutant("commit_before_flush", "persist: the commit word is stored before the copies are flushed",
                       false),
          crash_mutant("tx_unlogged_color", "tx: node headers (colours, children) changed without saving them", true),
      },
      exhaustive_fill_empty("rbtree", "removes", 120, 40));
}

}  // namespace pmindex::builtin

// The tests of `skiplist` (index_tests.hpp): its mutants, in the order of
// its mutant enum, and its test profile; its registry entry is entry.cpp.
#include "pmemids/detail/tests.hpp"

namespace pmindex::builtin {

index_tests skiplist_tests() {
  using namespace pmemids;
  return ordered_tests(
      "skiplist",
      {
          crash_mutant("link_before_flush", "persist: a new node is linked at level 0 before it is flushed", false),
          crash_mutant("tx_unlogged_link", "tx: an insert links level 0 without saving the old next word", true),
          crash_mutant("no_rebuild", "persist: recovery trusts the upper levels a crash left", false),
      },
      {{"exhaustive_removes", "crashtest --index skiplist --exhaustive --ops 120 --keys 40 --seed 5", "", ""}});
}

}  // namespace pmindex::builtin

// The tests of `hashtable` (index_tests.hpp): its mutants, in the order of
// its mutant enum, and its test profile; its registry entry is entry.cpp.
#include "pmemids/detail/tests.hpp"

namespace pmindex::builtin {

index_tests hashtable_tests() {
  using namespace pmemids;
  // Exhaustive over histories that double the table (16 -> 32 -> 64).
  const std::string resize = "--index hashtable --exhaustive --ops 70 --keys 60 --seed 5";
  return ordered_tests(
      "hashtable",
      {crash_mutant("publish_before_flush", "persist: a new element is linked before it is flushed", false),
       crash_mutant("resize_in_place", "persist: a resize relinks the chains the committed table still uses", false),
       crash_mutant("tx_unlogged_head", "tx: an insert stores the chain head without logging it (never flushed at commit)",
                    true)},
      {{"exhaustive_resize", "crashtest " + resize, "", ""},
       {"tx_exhaustive_resize", "crashtest --mode tx " + resize, "", ""}});
}

}  // namespace pmindex::builtin

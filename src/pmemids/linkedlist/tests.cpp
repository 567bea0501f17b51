// The tests of `linkedlist` (index_tests.hpp): its mutants, in the order of
// its mutant enum, and its test profile; its registry entry is entry.cpp.
#include "pmemids/detail/tests.hpp"

namespace pmindex::builtin {

index_tests linkedlist_tests() {
  using namespace pmemids;
  index_tests e = ordered_tests(
      "linkedlist",
      {crash_mutant("publish_before_flush", "persist: a new element is linked before it is flushed", false),
       crash_mutant("tx_unlogged_link",
                    "tx: an insert stores the link to the new element without logging it (never flushed)", true)});
  // Every crash image rebuilds the DRAM table and looks up every key the
  // history wrote: about 5x the time per image of the hashtable under ASan.
  e.tests->crash_images = 800;
  for (auto& x : e.tests->extra)
    if (x.name == "tx_random") x.args = "crashtest --index linkedlist --mode tx --images 800 --ops 2500 --seed 1";
  return e;
}

}  // namespace pmindex::builtin

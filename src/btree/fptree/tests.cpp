// The tests of `fptree` (index_tests.hpp): its mutants, in the order of
// its mutant enum, and its test profile; its registry entry is entry.cpp.
#include "btree/detail/tests.hpp"

namespace pmindex::builtin {

index_tests fptree_tests() {
  index_tests e = btree::detail::hybrid_tests("fptree", "leaf=4,inner=3");
  // After the byte layout's mutant (hybrid_mutant, same order): the scan
  // order hint trusted without its key order check. A slot freed and taken
  // again by a key of another rank, or a leaf that grew, then scans out of
  // order.
  e.mutants.push_back({"scan_order_unchecked", "a scan trusts a leaf's order hint without checking its key order",
                       "stress", "--params leaf=4,inner=3 --threads 2 --seconds 3 --keys 2000 --check range",
                       "out of order|misses or misreports"});
  // The default 64-slot leaf over a key space large enough to split; leaf
  // and inner splits under 2 threads.
  e.tests->extra.push_back(
      {"crash_default_leaf", "crashtest --index fptree --images 1500 --ops 1200 --keys 3000 --seed 21"});
  e.tests->extra.push_back(
      {"stress_small_nodes",
       "stress --index fptree --params leaf=4,inner=3 --threads 2 --seconds 3 --keys 3000 --check stats,range"});
  return e;
}

}  // namespace pmindex::builtin

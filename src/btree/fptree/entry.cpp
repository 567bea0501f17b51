// Registry entry of `fptree` (see fptree.hpp): the hybrid B+-tree core
// (btree/detail/entry.hpp) with the FPTree leaf (leaf.hpp).
#include "btree/fptree/fptree.hpp"

#include "btree/detail/entry.hpp"
#include "btree/fptree/leaf.hpp"
#include "builtin_indexes.hpp"

namespace pmindex::btree::fptree {
namespace {

index_entry make_entry() {
  index_entry e = btree::detail::hybrid_entry<detail::leaf_ops>(
      "fptree", "FPTree: PM leaves with fingerprints, DRAM inner nodes rebuilt at open", "FPTree (SIGMOD'16)",
      "leaf=4,inner=3");
  e.params = {{"leaf", "slots per leaf (the bitmap is one 8-byte word)", "64", {}, 4, 64},
              {"inner", "separator keys per DRAM inner node", "128", {}, 3, 4096}};
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

}  // namespace
}  // namespace pmindex::btree::fptree

namespace pmindex::builtin {
index_entry fptree_entry() { return pmindex::btree::fptree::make_entry(); }
}  // namespace pmindex::builtin

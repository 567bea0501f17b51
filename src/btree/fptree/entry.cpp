// Registry entry of `fptree` (see fptree.hpp); the tree is the hybrid B+-tree
// core in btree/detail/hybrid_tree.hpp with the FPTree leaf (leaf.hpp).
#include "btree/fptree/fptree.hpp"

#include "btree/detail/hybrid_tree.hpp"
#include "btree/fptree/leaf.hpp"

namespace pmindex::btree::fptree {
namespace {

index_entry make_entry() {
  index_entry e;
  e.name = "fptree";
  e.family = "btree";
  e.description = "FPTree: PM leaves with fingerprints, DRAM inner nodes rebuilt at open";
  e.paper = "FPTree (SIGMOD'16)";
  e.concurrent = true;
  e.modes = {pm::mode::dram, pm::mode::volatile_, pm::mode::persist, pm::mode::eadr};
  e.key_kinds = {key_kind::u64};
  e.scan_guarantee =
      "sorted, no duplicates; each leaf read as one validated snapshot; a record present for the whole scan is "
      "returned";
  e.params = {{"leaf", "slots per leaf (the bitmap is one 8-byte word)", "64", {}, 4, 64},
              {"inner", "separator keys per DRAM inner node", "128", {}, 3, 4096}};
  // Small nodes so short crash histories split leaves and inner nodes often.
  e.tests = test_profile{.crash_args = "--params leaf=4,inner=3"};
  e.tests->extra = {
      // The default 64-slot leaf over a key space large enough to split.
      {"crash_default_leaf", "crashtest --index fptree --images 1500 --ops 1200 --keys 3000 --seed 21"},
      // Leaf and inner splits under 2 threads.
      {"stress_small_nodes",
       "stress --index fptree --params leaf=4,inner=3 --threads 2 --seconds 3 --keys 3000 --check stats,range"},
  };
  e.factory = [](pm::pool& p, open_kind k, const index_config& c) -> std::unique_ptr<index> {
    return std::make_unique<btree::detail::hybrid_tree<detail::leaf_ops>>(p, k, c);
  };
  return e;
}

}  // namespace
PMINDEX_REGISTER_INDEX(make_entry);
}  // namespace pmindex::btree::fptree

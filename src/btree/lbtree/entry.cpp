// Registry entry of `lbtree` (see lbtree.hpp); the tree is the hybrid B+-tree
// core in btree/detail/hybrid_tree.hpp with the LB+-Tree leaf (leaf.hpp).
#include "btree/lbtree/lbtree.hpp"

#include "btree/detail/hybrid_tree.hpp"
#include "btree/lbtree/leaf.hpp"

namespace pmindex::btree::lbtree {
namespace {

index_entry make_entry() {
  index_entry e;
  e.name = "lbtree";
  e.family = "btree";
  e.description = "LB+-Tree: 256-byte PM leaves, entry moving, logless splits, DRAM inner nodes";
  e.paper = "LB+-Tree (VLDB'20)";
  e.concurrent = true;
  e.modes = {pm::mode::dram, pm::mode::volatile_, pm::mode::persist, pm::mode::eadr};
  e.key_kinds = {key_kind::u64};
  e.scan_guarantee =
      "sorted, no duplicates; each leaf read as one validated snapshot; a record present for the whole scan is "
      "returned";
  e.params = {{"inner", "separator keys per DRAM inner node", "15", {}, 3, 4096}};
  e.tests = test_profile{.crash_args = "--params inner=3"};
  e.tests->extra = {
      {"crash_default_inner", "crashtest --index lbtree --images 1500 --ops 800 --keys 1000 --seed 22"},
      {"stress_small_inner",
       "stress --index lbtree --params inner=3 --threads 2 --seconds 3 --keys 3000 --check stats,range"},
  };
  e.factory = [](pm::pool& p, open_kind k, const index_config& c) -> std::unique_ptr<index> {
    return std::make_unique<btree::detail::hybrid_tree<detail::leaf_ops>>(p, k, c);
  };
  return e;
}

}  // namespace
PMINDEX_REGISTER_INDEX(make_entry);
}  // namespace pmindex::btree::lbtree

#include "pmindex/btree/lbtree/lbtree.hpp"

#include "pmindex/btree/detail/hybrid_tree.hpp"
#include "pmindex/btree/lbtree/detail/leaf.hpp"

namespace pmindex::lbtree {

index_entry make_entry() {
  index_entry e;
  e.name = "lbtree";
  e.description = "LB+-Tree (VLDB'20): 256-byte PM leaves, entry moving, logless splits, DRAM inner nodes";
  e.concurrent = true;
  e.modes = {pm::mode::dram, pm::mode::volatile_, pm::mode::persist, pm::mode::eadr};
  e.default_params = "inner=" + std::to_string(params{}.inner_entries);
  e.factory = [](pm::pool& p, open_kind k) -> std::unique_ptr<index> {
    return std::make_unique<btree::detail::hybrid_tree<btree::lbtree::detail::leaf_ops>>(p, k);
  };
  return e;
}

}  // namespace pmindex::lbtree

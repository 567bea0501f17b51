#include "pmindex/btree/fptree/fptree.hpp"

#include "pmindex/btree/detail/hybrid_tree.hpp"
#include "pmindex/btree/fptree/detail/leaf.hpp"

namespace pmindex::fptree {

index_entry make_entry() {
  index_entry e;
  e.name = "fptree";
  e.description = "FPTree (SIGMOD'16): PM leaves with fingerprints, DRAM inner nodes rebuilt at open";
  e.concurrent = true;
  e.modes = {pm::mode::dram, pm::mode::volatile_, pm::mode::persist, pm::mode::eadr};
  params d;
  e.default_params = "leaf=" + std::to_string(d.leaf_entries) + ",inner=" + std::to_string(d.inner_entries);
  e.factory = [](pm::pool& p, open_kind k) -> std::unique_ptr<index> {
    return std::make_unique<btree::detail::hybrid_tree<btree::fptree::detail::leaf_ops>>(p, k);
  };
  return e;
}

}  // namespace pmindex::fptree

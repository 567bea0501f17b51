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
      "fptree", "FPTree: PM leaves with fingerprints, DRAM inner nodes rebuilt at open", "FPTree (SIGMOD'16)");
  e.params = {{"leaf", "slots per leaf (the bitmap is one 8-byte word)", "64", {}, 4, 64},
              {"inner", "separator keys per DRAM inner node", "128", {}, 3, 4096}};
  return e;
}

}  // namespace
}  // namespace pmindex::btree::fptree

namespace pmindex::builtin {
index_entry fptree_entry() { return pmindex::btree::fptree::make_entry(); }
}  // namespace pmindex::builtin

// Registry entry of the pmemids `btree` (see btree.hpp).
#include "pmemids/btree/btree.hpp"
#include "pmemids/detail/entry.hpp"
#include "builtin_indexes.hpp"

namespace pmindex::pmemids::btree {

namespace {

index_entry make_btree() {
  return ordered_entry<tree>("btree",
                             "pmemids B-tree: values in the nodes, minimum degree 9, linear search (persist: "
                             "copy-on-write)",
                             k_max_embedded_value, true);
}

}  // namespace
}  // namespace pmindex::pmemids::btree

namespace pmindex::builtin {
index_entry btree_entry() { return pmindex::pmemids::btree::make_btree(); }
}  // namespace pmindex::builtin

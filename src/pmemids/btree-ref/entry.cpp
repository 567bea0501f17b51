// Registry entry of the pmemids `btree-ref`: the btree (src/pmemids/btree)
// with values referenced by pointer, one value block per record (see
// btree.hpp, "btree-ref"): the same code, built with by_ref = true.
#include "pmemids/btree/btree.hpp"
#include "pmemids/detail/entry.hpp"
#include "builtin_indexes.hpp"

namespace pmindex::pmemids::btree {
namespace {

index_entry make_btree_ref() {
  return ordered_entry<tree>("btree-ref",
                             "pmemids B-tree with values referenced by pointer (a value block per record), minimum "
                             "degree 9",
                             k_max_ref_value, false, true);
}

}  // namespace
}  // namespace pmindex::pmemids::btree

namespace pmindex::builtin {
index_entry btree_ref_entry() { return pmindex::pmemids::btree::make_btree_ref(); }
}  // namespace pmindex::builtin

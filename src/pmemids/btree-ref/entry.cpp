// Registry entry of the pmemids `btree-ref`: the btree (src/pmemids/btree)
// with values referenced by pointer, one value block per record (see
// btree.hpp, "btree-ref"): the same code, built with by_ref = true.
#include "pmemids/btree/btree.hpp"
#include "pmemids/detail/entry.hpp"
#include "builtin_indexes.hpp"

namespace pmindex::pmemids::btree {
namespace {

index_entry make_btree_ref() {
  auto m = btree_mutants();
  m.push_back(crash_mutant("value_not_flushed", "persist: a value block is linked without being flushed", false));
  m.push_back(crash_mutant("tx_value_outside", "tx: a value block allocated outside the transaction", true));
  return ordered_entry<tree>("btree-ref",
                             "pmemids B-tree with values referenced by pointer (a value block per record), minimum "
                             "degree 9",
                             k_max_ref_value, false, std::move(m), exhaustive_fill_empty("btree-ref", "removes", 120, 40),
                             true);
}

}  // namespace
}  // namespace pmindex::pmemids::btree

namespace pmindex::builtin {
index_entry btree_ref_entry() { return pmindex::pmemids::btree::make_btree_ref(); }
}  // namespace pmindex::builtin

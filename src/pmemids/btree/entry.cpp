// Registry entry of the pmemids `btree` (see btree.hpp).
#include "pmemids/btree/btree.hpp"
#include "pmemids/detail/entry.hpp"
#include "builtin_indexes.hpp"

namespace pmindex::pmemids::btree {

std::vector<mutant_spec> btree_mutants() {
  return {
      crash_mutant("publish_before_flush", "persist: a new node is linked before it is flushed", false),
      crash_mutant("tx_unlogged_shift", "tx: a leaf insert shifts records it did not save in the undo log", true),
      crash_mutant("tx_unlogged_merge", "tx: a remove merges two nodes into one it did not save in the undo log",
                   true, "--ops 1500 --images 800 --keys 60 --seed 5 --max-violations 1"),
  };
}

namespace {

index_entry make_btree() {
  // Exhaustive over a history that fills 40 keys (17 records a node: root
  // splits) and empties them (rotations, merges, internal keys replaced,
  // the root shrinking: tx_unlogged_merge is caught on its first 100 ops).
  return ordered_entry<tree>("btree",
                             "pmemids B-tree: values in the nodes, minimum degree 9, linear search (persist: "
                             "copy-on-write)",
                             k_max_embedded_value, true, btree_mutants(), exhaustive_fill_empty("btree", "removes", 120, 40));
}

}  // namespace
}  // namespace pmindex::pmemids::btree

namespace pmindex::builtin {
index_entry btree_entry() { return pmindex::pmemids::btree::make_btree(); }
}  // namespace pmindex::builtin

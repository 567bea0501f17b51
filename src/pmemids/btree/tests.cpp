// The tests of `btree` (index_tests.hpp): its mutants, in the order of
// its mutant enum, and its test profile; its registry entry is entry.cpp.
// btree-ref's tests are here too: its mutants extend btree's.
#include "pmemids/detail/tests.hpp"

namespace pmindex::builtin {

namespace {
// btree's mutants, in the order of its mutant enum (btree.hpp); btree-ref
// lists them and its own two.
std::vector<mutant_spec> btree_mutants() {
  using namespace pmemids;
  return {
      crash_mutant("publish_before_flush", "persist: a new node is linked before it is flushed", false),
      crash_mutant("tx_unlogged_shift", "tx: a leaf insert shifts records it did not save in the undo log", true),
      crash_mutant("tx_unlogged_merge", "tx: a remove merges two nodes into one it did not save in the undo log",
                   true, "--ops 1500 --images 800 --keys 60 --seed 5 --max-violations 1"),
  };
}
}  // namespace

index_tests btree_tests() {
  // Exhaustive over a history that fills 40 keys (17 records a node: root
  // splits) and empties them (rotations, merges, internal keys replaced,
  // the root shrinking: tx_unlogged_merge is caught on its first 100 ops).
  return pmemids::ordered_tests("btree", btree_mutants(), pmemids::exhaustive_fill_empty("btree", "removes", 120, 40));
}

index_tests btree_ref_tests() {
  using namespace pmemids;
  auto m = btree_mutants();
  m.push_back(crash_mutant("value_not_flushed", "persist: a value block is linked without being flushed", false));
  m.push_back(crash_mutant("tx_value_outside", "tx: a value block allocated outside the transaction", true));
  return ordered_tests("btree-ref", std::move(m), exhaustive_fill_empty("btree-ref", "removes", 120, 40));
}

}  // namespace pmindex::builtin

// The tests of `pactree` (index_tests.hpp): its mutants, in the order of
// its mutant enum, and its test profile; its registry entry is entry.cpp.
#include "index_tests.hpp"

namespace pmindex::builtin {

index_tests pactree_tests() {
  index_tests e;
  // In the order of enum class mutant (pactree.hpp).
  const std::string crash = "--params node=4 --images 800 --ops 400 --keys 48 --seed 5 --max-violations 1";
  e.mutants = {
      // Which of the two symptoms comes first depends on when the SMO thread
      // runs (one crash point apart): the node not clipped, or its anchor
      // never added to the layer.
      {"split_unlogged", "a split writes no SMO log entry, so recovery cannot clip its node", "crashtest", crash,
       "at or above the next node's anchor|data node [0-9]+ has no anchor in the layer"},
      {"merge_link_first", "a merge unlinks the absorbed node before the copies are in the bitmap", "crashtest",
       crash, "a completed operation was lost"},
      {"node_unflushed", "a split links its new node before the node is durable", "crashtest", crash,
       "recovery failed: pactree|after recovery: pactree|operation was lost|never written"},
      {"generation_ignored", "lock words of an older generation are trusted (no lazy reset)", "crashtest", crash,
       "node left locked or obsolete"},
      {"layer_unflushed", "the SMO thread publishes new search-layer nodes before they are durable", "crashtest",
       crash, "search layer"},
  };
  e.tests = test_profile{.crash_args = "--params node=4", .crash_bytes_args = "--params node=4"};
  const std::string small = " --index pactree --params node=4";
  e.tests->extra = {
      // Every persistence event of a history full of splits, merges and
      // SMO-thread log frees is a crash point.
      {"exhaustive_smo", "crashtest" + small + " --exhaustive --ops 100 --keys 32 --seed 6 --stats", "",
       " [1-9][0-9]* violations"},
      {"exhaustive_smo_bytes", "crashtest" + small + ",keys=bytes --exhaustive --ops 80 --keys 32 --seed 7", "",
       " [1-9][0-9]* violations"},
      {"threads2_safe", "crashtest" + small + ",scan=safe --threads 2 --images 600 --ops 400 --seed 8", "",
       " [1-9][0-9]* violations"},
      {"snapshot", "stress --index pactree --params scan=safe --threads 2 --seconds 2 --check snapshot", "",
       " [1-9][0-9]* violations"},
      // The original's mode is not atomic, and the snapshot check sees it.
      {"snapshot_unsafe_is_not_atomic",
       "stress --index pactree --params scan=unsafe --threads 2 --seconds 2 --check snapshot",
       "snapshot check: .* [1-9][0-9]* violations", ""},
      {"snapshot_small_nodes", "stress" + small + ",scan=safe --threads 3 --seconds 2 --check snapshot", "",
       " [1-9][0-9]* violations"},
      {"stress_small_nodes_safe", "stress" + small + ",scan=safe --threads 4 --seconds 3 --keys 3000 --check stats,range", "",
       " [1-9][0-9]* violations"},
  };
  return e;
}

}  // namespace pmindex::builtin

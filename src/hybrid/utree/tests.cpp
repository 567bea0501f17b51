// The tests of `utree` (index_tests.hpp): its mutants, in the order of
// its mutant enum, and its test profile; its registry entry is entry.cpp.
#include "index_tests.hpp"

namespace pmindex::builtin {

index_tests utree_tests() {
  index_tests e;
  // In the order of enum class mutant (utree.hpp).
  const std::string crash = "--params leaf=4 --images 800 --ops 400 --keys 48 --seed 5 --max-violations 1";
  e.mutants = {
      {"node_unflushed", "an insert links its node before the node is durable", "crashtest", crash,
       "recovery failed: utree|after recovery: utree|operation was lost|never written|never inserted"},
      {"pred_unflushed", "an insert never flushes the predecessor's next word (its commit)", "crashtest",
       crash, "operation was lost"},
      {"free_no_epoch", "a remove frees its node at once, while scans may stand on it", "stress",
       "--params leaf=4 --threads 4 --seconds 4 --keys 400 --check stats,range", "stress: violation: .*scan"},
      // A wrong upper fence: check(). One thread, so that the search layer
      // never lags a split and no lookup or write relies on the fence (with
      // more, the writer of a new leaf's lowest key may be sent to the leaf
      // on its left and the live run fails first); one too high, so that
      // nothing loops.
      {"high_off_by_one", "a split stores the left leaf's copy of its next leaf's low one too high", "stress",
       "--params leaf=4 --threads 1 --seconds 1 --keys 400 --check stats", "copy of its next leaf's low"},
  };
  e.tests = test_profile{.crash_args = "--params leaf=4", .crash_bytes_args = "--params leaf=4"};
  const std::string small = " --index utree --params leaf=4";
  e.tests->extra = {
      // Every persistence event of a history of list inserts and removes
      // (leaves split and unlink) is a crash point.
      {"exhaustive_list", "crashtest" + small + " --exhaustive --ops 120 --keys 32 --seed 6 --stats", "",
       " [1-9][0-9]* violations"},
      {"exhaustive_list_bytes", "crashtest" + small + ",keys=bytes --exhaustive --ops 80 --keys 32 --seed 7",
       "", " [1-9][0-9]* violations"},
      {"threads4_random", "crashtest" + small + " --threads 4 --images 1500 --ops 600 --seed 9", "",
       " [1-9][0-9]* violations"},
      {"crash_bytes_threads2",
       "crashtest" + small + ",keys=bytes --threads 2 --images 800 --ops 400 --seed 3", "",
       " [1-9][0-9]* violations"},
      {"stress_small_leaves", "stress" + small + " --threads 4 --seconds 3 --keys 3000 --check stats,range",
       "", " [1-9][0-9]* violations"},
      {"stress_bytes_small_leaves",
       "stress" + small + ",keys=bytes --threads 2 --seconds 3 --keys 3000 --check stats,range", "",
       " [1-9][0-9]* violations"},
  };
  return e;
}

}  // namespace pmindex::builtin

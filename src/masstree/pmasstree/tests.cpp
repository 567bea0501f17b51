// The tests of `pmasstree` (index_tests.hpp): its mutants, in the order of
// its mutant enum, and its test profile; its registry entry is entry.cpp.
#include "index_tests.hpp"

namespace pmindex::builtin {

index_tests pmasstree_tests() {
  index_tests e;
  // In the order of enum class mutant (pmasstree.hpp).
  const std::string small = "--params leaf=3,inner=3";
  const std::string crash = small + " --images 800 --ops 400 --keys 48 --seed 5 --max-violations 1";
  const std::string lost =
      "a completed operation was lost|never written|never inserted|outside the history|"
      "recovery failed: pmasstree|after recovery: pmasstree";
  e.mutants = {
      {"perm_before_flush", "an insert's permutation names a slot that was never flushed", "crashtest", crash,
       lost},
      {"sibling_unflushed", "a split links its new leaf before the leaf is durable", "crashtest", crash,
       lost},
      {"lock_trusted", "lock words of an older generation are trusted (no generation check)", "crashtest",
       crash, "left locked"},
      {"layer_unflushed", "a new layer is swung in before its leaf is durable", "crashtest",
       "--params keys=bytes,leaf=3,inner=3 --dataset urls --value-size 20 --images 800 --ops 400 --keys 48 "
       "--seed 5 "
       "--max-violations 1",
       lost},
      // 8000 keys: the tree grows (splits) through most of the run.
      {"no_recheck", "a writer trusts the leaf its descent found (no B-link check under the leaf lock)",
       "stress", "--params leaf=2,inner=3 --mode dram --threads 4 --seconds 3 --keys 2000",
       "stress: violation"},
      {"unlink_first", "an emptied leaf leaves the chain before its parent stops naming it", "crashtest", crash,
       lost},
      // 8 keys per thread: leaves empty and drop at every few writes, so a
      // run slowed by a loaded machine (the yield of every write) still
      // lands writers on dropped leaves (2000 keys: 190 violations on a quiet
      // machine, none in one CI-like run of 24,000 operations).
      {"dead_trusted", "a writer writes into a leaf a remove has unlinked", "stress",
       "--params leaf=2,inner=3 --mode dram --threads 4 --seconds 3 --keys 8", "stress: violation"},
  };
  e.tests = test_profile{.crash_args = small, .crash_bytes_args = "--params leaf=3,inner=3"};
  const std::string run = " --index pmasstree ";
  const std::string urls = " --params keys=bytes,leaf=3,inner=3 --dataset urls --value-size 20";
  e.tests->extra = {
      // Every persistence event of a history full of leaf and inner splits.
      {"exhaustive_splits", "crashtest" + run + small + " --exhaustive --ops 120 --keys 64 --seed 6 --stats",
       "", " [1-9][0-9]* violations"},
      // URLs share long prefixes: layers made, split and nested.
      {"bytes_urls", "crashtest" + run + urls + " --images 1500 --ops 800 --keys 200 --seed 9", "",
       " [1-9][0-9]* violations"},
      {"exhaustive_layers", "crashtest" + run + urls + " --exhaustive --ops 80 --keys 32 --seed 10", "",
       " [1-9][0-9]* violations"},
      {"bytes_urls_threads2", "crashtest" + run + urls + " --threads 2 --images 600 --ops 400 --seed 11", "",
       " [1-9][0-9]* violations"},
      {"bytes_urls_threads4",
       "crashtest" + run + urls + " --threads 4 --images 600 --ops 400 --keyset shared --keys 32 --seed 12",
       "", " [1-9][0-9]* violations"},
      {"stress_small_nodes",
       "stress" + run + "--params leaf=3,inner=3 --threads 4 --seconds 3 --keys 3000 --check stats,range", "",
       " [1-9][0-9]* violations"},
      {"stress_bytes_urls", "stress" + run + urls + " --threads 3 --seconds 3 --keys 3000", "",
       " [1-9][0-9]* violations"},
  };
  return e;
}

}  // namespace pmindex::builtin

// The tests of `roart` (index_tests.hpp): its mutants, in the order of
// its mutant enum, and its test profile; its registry entry is entry.cpp.
#include "index_tests.hpp"

namespace pmindex::builtin {

index_tests roart_tests() {
  index_tests e;
  // In the order of enum class mutant (roart.hpp).
  const std::string crash = "--params leaf=4 --images 600 --ops 300 --seed 5 --max-violations 1";
  e.mutants = {
      {"leaf_unflushed", "a leaf's slot is committed before the leaf is flushed", "crashtest",
       crash + " --dataset u64-bytes --value-size 100 --params keys=bytes",
       "fingerprint disagrees|never written|never inserted|outside the history|damaged|recovery failed"},
      {"split_swing_early", "a split swings the parent before its new nodes are durable", "crashtest", crash,
       "recovery failed: roart|after recovery: roart"},
      {"stale_volatile", "a leaf array's bitmap is trusted across a restart (no generation check)",
       "crashtest", crash, "a completed operation was lost"},
      {"insert_unlocked", "an insert into a leaf array stores its slot without the array's lock word", "stress",
       "--threads 4 --seconds 3 --keys 200", "stress: violation"},
  };
  e.tests = test_profile{.crash_args = "--params leaf=4", .crash_bytes_args = "--params leaf=4"};
  e.tests->extra = {
      // A history long enough to split leaf arrays into every node kind.
      {"exhaustive_growth", "crashtest --index roart --params leaf=2 --exhaustive --ops 300 --keys 400 --seed 6 --stats",
       "", " [1-9][0-9]* violations"},
      {"snapshot", "stress --index roart --threads 2 --seconds 2 --check snapshot", "", " [1-9][0-9]* violations"},
      {"snapshot_bytes", "stress --index roart --params keys=bytes --threads 2 --seconds 2 --check snapshot", "",
       " [1-9][0-9]* violations"},
  };
  return e;
}

}  // namespace pmindex::builtin

// The tests of `canary` (index_tests.hpp): its mutants, in the order of
// its mutant enum, and its test profile; its registry entry is entry.cpp.
#include "index_tests.hpp"

namespace pmindex::builtin {

index_tests canary_tests() {
  index_tests e;
  // In the order of enum class mutant (canary.hpp).
  const std::string crash = "--ops 300 --images 3000 --max-violations 1";
  const std::string bytes = crash + " --dataset u64-bytes --value-size 100";
  e.mutants = {
      {"publish_before_flush", "links a node before its contents are durable", "crashtest", crash, "damaged node"},
      {"flush_without_fence", "insert returns with its link flushed, not fenced", "crashtest", crash,
       "a completed operation was lost"},
      {"torn_16byte", "update writes two words in two lines, not atomically", "crashtest", crash, "torn value"},
      {"free_before_durable", "remove frees the node before the unlink is fenced", "crashtest", crash,
       "a freed block is still"},
      {"kv_publish_before_flush", "keys=bytes: a kv block is published before it is flushed", "crashtest", bytes,
       "recovery failed|never inserted|never written"},
      {"kv_free_before_durable", "keys=bytes: remove frees the kv block before the unlink is fenced", "crashtest",
       bytes + " --seed 3", "a freed block is still"},  // (seed: a history whose images show it)
      // The stress test's scan check must catch the old scan bug (the
      // predecessor's link read twice) on hot keys.
      {"scan_rereads_pred", "scan re-reads the predecessor's link (keys below from, out of order)", "stress",
       "--mode dram --threads 4 --seconds 8 --keys 64", "returned a smaller key|out of order"},
  };
  e.tests = test_profile{};
  // The stress test must catch a use-after-free (a node freed while readers
  // may hold it); probabilistic, so long runs only.
  e.tests->extra = {
      {"stress_catches_free_before_durable",
       "stress --index canary --mode dram --seconds 10 --keys 500 --params mutant=free_before_durable",
       "stress: violation", "", true, true},
      {"stress_catches_kv_free_before_durable",
       "stress --index canary --mode dram --seconds 10 --keys 500 --params mutant=kv_free_before_durable "
       "--dataset u64-bytes --value-size 100",
       "stress: violation", "", true, true}};
  return e;
}

}  // namespace pmindex::builtin

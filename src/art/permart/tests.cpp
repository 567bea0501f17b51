// The tests of `permart` and `permart-2log` (index_tests.hpp): its mutants, in the order of
// its mutant enum, and its test profile; its registry entry is entry.cpp.
#include "index_tests.hpp"

namespace pmindex::builtin {

namespace {
index_tests permart_family_tests(bool log) {
  index_tests e;
  const std::string name = log ? "permart-2log" : "permart";
  // In the order of enum class mutant (permart.hpp).
  const std::string crash = "--images 600 --ops 300 --seed 5 --max-violations 1";
  e.mutants = {
      {"publish_before_flush", "slot stored before the new node's flush is fenced", "crashtest", crash,
       "(recovery failed|after recovery): permart"},
      {"flush_without_fence", "an operation returns with its slot flushed, not fenced", "crashtest", crash,
       "a completed operation was lost"},
      {"free_before_durable", "the replaced node is freed before the swing is durable", "crashtest", crash,
       "a completed operation was lost"},
      {"scan_not_atomic", "scans read current versions, not their snapshot's", "stress",
       "--threads 1 --seconds 3 --mode dram --check snapshot", "matches no state between ops"},
      {"block_unflushed", "keys=bytes: a key or value block is published without its flush", "crashtest",
       crash + " --dataset u64-bytes --value-size 100",
       "damaged (key|value) block|never written|never inserted"},
      {"link_nulled_early", "a removed slot's version link is nulled before its grace period", "stress",
       "--threads 1 --seconds 3 --mode dram --check snapshot", "matches no state between ops"},
      {"count_before_child", "a child added in place is counted before its leaf, byte and slot are durable",
       "crashtest", "--images 1000 --ops 1000 --keys 64 --seed 1 --max-violations 1",
       "(recovery failed|after recovery|was lost|damaged|in flight allows only)"},
  };
  // Range queries are atomic snapshots under concurrent writes.
  e.tests = test_profile{};
  e.tests->extra = {
      {"snapshot", "stress --index " + name + " --threads 2 --seconds 3 --check snapshot"},
      {"snapshot_dram", "stress --index " + name + " --threads 1 --seconds 2 --mode dram --check snapshot"},
      {"snapshot_long", "stress --index " + name + " --threads 4 --seconds 60 --check snapshot,range", "", "", true},
  };
  return e;
}
}  // namespace

index_tests permart_tests() { return permart_family_tests(false); }
index_tests permart_2log_tests() { return permart_family_tests(true); }

}  // namespace pmindex::builtin

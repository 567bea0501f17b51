// What the tests of the hybrid B+-trees (fptree, lbtree) share: the
// byte-layout mutants and byte-layout tests. `small` are the node
// parameters that make short crash histories split leaves and inner nodes
// often ("leaf=4,inner=3"); each tests.cpp adds its own mutants and extra
// tests.
#pragma once

#include <string>

#include "index_tests.hpp"

namespace pmindex::btree::detail {

inline index_tests hybrid_tests(const std::string& name, const std::string& small) {
  index_tests e;
  e.tests = test_profile{.crash_args = "--params " + small, .crash_bytes_args = "--params " + small};
  // The mutants both share (hybrid_mutant, same order; fptree/entry.cpp adds one).
  // leaf_unlink_unpersisted: a remove that empties a leaf unlinks it without
  // persisting the new link, then forwards the leaf to its left neighbour;
  // an image that holds the forward but not the unlink has a cycle in the
  // chain. Removes empty 4-slot leaves in the history's shrinking phases.
  e.mutants = {
      {"kv_block_unflushed", "keys=bytes: a record's kv block is published without being flushed", "crashtest",
       "--params keys=bytes," + small + " --images 800 --ops 400 --keys 64 --seed 1 --max-violations 1",
       "record block"},
      {"leaf_unlink_unpersisted", "an emptied leaf is unlinked without persisting the new link", "crashtest",
       "--params " + small + " --images 1500 --ops 1500 --keys 64 --seed 1 --max-violations 1",
       "keys out of order|cycle"},
  };
  const std::string run = " --index " + name + " --params keys=bytes";
  e.tests->extra = {
      // keys=bytes through the u64 calls (8-byte keys and values in record
      // blocks): leaf and inner splits with byte fences, 2 threads, and the
      // default nodes.
      {"crash_bytes_u64_calls", "crashtest" + run + "," + small + " --images 1500 --ops 1500 --seed 7"},
      {"crash_bytes_threads2", "crashtest" + run + "," + small + " --threads 2 --images 600 --ops 400 --seed 3"},
      {"crash_bytes_default_nodes", "crashtest" + run + " --images 1000 --ops 1200 --keys 3000 --seed 23"},
      {"stress_bytes_small_nodes",
       "stress" + run + "," + small + " --threads 2 --seconds 3 --keys 3000 --check stats,range"},
  };
  return e;
}

}  // namespace pmindex::btree::detail

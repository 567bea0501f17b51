// What the tests of the WORT family (wort, woart, artcow) share; each
// tests.cpp adds its mutants.
#pragma once

#include <string>

#include "index_tests.hpp"

namespace pmindex::art::detail {

// `growth_pass`: what the exhaustive-growth crash run's --stats must show
// (a regex; "" when the index has no Node256 to reach).
inline index_tests family_tests(const std::string& name, const char* growth_pass) {
  index_tests e;
  // Exhaustive crash points over a history in which one node passes
  // Node4 -> 16 -> 48 -> 256 and prefixes split at every depth (400 keys: the
  // first 300 operations only grow); --stats proves the growth happened.
  // Ranges must be atomic snapshots in both layouts (`stress --check
  // snapshot`; the generic index::range failed it: tests/unit/wort_range_test.cpp).
  e.tests = test_profile{};
  e.tests->extra = {
      {"exhaustive_growth", "crashtest --index " + name + " --exhaustive --ops 300 --keys 400 --seed 6 --stats",
       growth_pass, " [1-9][0-9]* violations"},
      {"snapshot", "stress --index " + name + " --threads 2 --seconds 2 --check snapshot", "",
       " [1-9][0-9]* violations"},
      {"snapshot_bytes", "stress --index " + name + " --params keys=bytes --threads 2 --seconds 2 --check snapshot",
       "", " [1-9][0-9]* violations"},
  };
  return e;
}

}  // namespace pmindex::art::detail

// The tests of `lbtree` (index_tests.hpp): its mutants, in the order of
// its mutant enum, and its test profile; its registry entry is entry.cpp.
#include "btree/detail/tests.hpp"

namespace pmindex::builtin {

index_tests lbtree_tests() {
  index_tests e = btree::detail::hybrid_tests("lbtree", "inner=3");
  e.tests->extra.push_back(
      {"crash_default_inner", "crashtest --index lbtree --images 1500 --ops 800 --keys 1000 --seed 22"});
  e.tests->extra.push_back(
      {"stress_small_inner",
       "stress --index lbtree --params inner=3 --threads 2 --seconds 3 --keys 3000 --check stats,range"});
  return e;
}

}  // namespace pmindex::builtin

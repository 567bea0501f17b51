// The tests of `wort` (index_tests.hpp): its mutants, in the order of
// its mutant enum, and its test profile; its registry entry is entry.cpp.
#include "art/detail/tests.hpp"

namespace pmindex::builtin {

index_tests wort_tests() {
  index_tests e = art::detail::family_tests("wort", "");
  return e;
}

}  // namespace pmindex::builtin

// Registry entry of the pmemids `hashtable` (see hashtable.hpp).
#include "pmemids/detail/entry.hpp"
#include "pmemids/hashtable/hashtable.hpp"

namespace pmindex::pmemids::hashtable {
namespace {

index_entry make_entry() {
  index_entry e = structure_entry<hash_table>(
      "hashtable", "pmemids chained hash table, load factor 0.75, new elements at the chain head (unordered)", false);
  e.mutants = {
      {"publish_before_flush", "persist: a new element is linked before it is flushed", "crashtest", k_mutant_crash,
       k_mutant_lost},
      {"resize_in_place", "persist: a resize relinks the chains the committed table still uses", "crashtest",
       k_mutant_crash, k_mutant_lost},
      {"tx_unlogged_head", "tx: an insert stores the chain head without logging it (never flushed at commit)",
       "crashtest", k_mutant_crash + " --mode tx", k_mutant_lost},
  };
  // Exhaustive over histories that double the table (16 -> 32 -> 64).
  const std::string resize = "--index hashtable --exhaustive --ops 70 --keys 60 --seed 5";
  e.tests->extra.push_back({"exhaustive_resize", "crashtest " + resize, "", ""});
  e.tests->extra.push_back({"tx_exhaustive_resize", "crashtest --mode tx " + resize, "", ""});
  return e;
}

}  // namespace
PMINDEX_REGISTER_INDEX(make_entry);
}  // namespace pmindex::pmemids::hashtable

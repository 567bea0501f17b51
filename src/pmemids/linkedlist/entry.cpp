// Registry entry of the pmemids `linkedlist` (see linkedlist.hpp).
#include "pmemids/detail/entry.hpp"
#include "pmemids/linkedlist/linkedlist.hpp"

namespace pmindex::pmemids::linkedlist {
namespace {

index_entry make_entry() {
  index_entry e = structure_entry<list>(
      "linkedlist",
      "pmemids append-only linked list in the pool, found through a DRAM hash table rebuilt at open (unordered)", false);
  e.mutants = {
      {"publish_before_flush", "persist: a new element is linked before it is flushed", "crashtest", k_mutant_crash,
       k_mutant_lost},
      {"tx_unlogged_link", "tx: an insert stores the link to the new element without logging it (never flushed)",
       "crashtest", k_mutant_crash + " --mode tx", k_mutant_lost},
  };
  return e;
}

}  // namespace
PMINDEX_REGISTER_INDEX(make_entry);
}  // namespace pmindex::pmemids::linkedlist

// Registry entry of the pmemids `linkedlist` (see linkedlist.hpp).
#include "pmemids/detail/entry.hpp"
#include "pmemids/linkedlist/linkedlist.hpp"
#include "builtin_indexes.hpp"

namespace pmindex::pmemids::linkedlist {
namespace {

index_entry make_entry() {
  index_entry e = unordered_entry<list>(
      "linkedlist",
      "pmemids append-only linked list in the pool, found through a DRAM hash table rebuilt at open (unordered)",
      {crash_mutant("publish_before_flush", "persist: a new element is linked before it is flushed", false),
       crash_mutant("tx_unlogged_link",
                    "tx: an insert stores the link to the new element without logging it (never flushed)", true)});
  // Every crash image rebuilds the DRAM table and looks up every key the
  // history wrote: about 5x the time per image of the hashtable under ASan.
  e.tests->crash_images = 800;
  for (auto& x : e.tests->extra)
    if (x.name == "tx_random") x.args = "crashtest --index linkedlist --mode tx --images 800 --ops 2500 --seed 1";
  return e;
}

}  // namespace
}  // namespace pmindex::pmemids::linkedlist

namespace pmindex::builtin {
index_entry linkedlist_entry() { return pmindex::pmemids::linkedlist::make_entry(); }
}  // namespace pmindex::builtin

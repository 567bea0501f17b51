// Registry entry of the pmemids `hashtable` (see hashtable.hpp).
#include "pmemids/detail/entry.hpp"
#include "pmemids/hashtable/hashtable.hpp"
#include "builtin_indexes.hpp"

namespace pmindex::pmemids::hashtable {
namespace {

index_entry make_entry() {
  // Exhaustive over histories that double the table (16 -> 32 -> 64).
  const std::string resize = "--index hashtable --exhaustive --ops 70 --keys 60 --seed 5";
  return unordered_entry<hash_table>(
      "hashtable", "pmemids chained hash table, load factor 0.75, new elements at the chain head (unordered)",
      {crash_mutant("publish_before_flush", "persist: a new element is linked before it is flushed", false),
       crash_mutant("resize_in_place", "persist: a resize relinks the chains the committed table still uses", false),
       crash_mutant("tx_unlogged_head", "tx: an insert stores the chain head without logging it (never flushed at commit)",
                    true)},
      {{"exhaustive_resize", "crashtest " + resize, "", ""},
       {"tx_exhaustive_resize", "crashtest --mode tx " + resize, "", ""}});
}

}  // namespace
}  // namespace pmindex::pmemids::hashtable

namespace pmindex::builtin {
index_entry hashtable_entry() { return pmindex::pmemids::hashtable::make_entry(); }
}  // namespace pmindex::builtin

// Registry entry of the pmemids `skiplist` (see skiplist.hpp).
#include "pmemids/detail/entry.hpp"
#include "pmemids/skiplist/skiplist.hpp"
#include "builtin_indexes.hpp"

namespace pmindex::pmemids::skiplist {
namespace {

index_entry make_entry() {
  return ordered_entry<list>(
      "skiplist", "pmemids skip list: p = 0.5, 16 levels, values in the nodes (persist: level 0 commits)", 256, true,
      {
          crash_mutant("link_before_flush", "persist: a new node is linked at level 0 before it is flushed", false),
          crash_mutant("tx_unlogged_link", "tx: an insert links level 0 without saving the old next word", true),
          crash_mutant("no_rebuild", "persist: recovery trusts the upper levels a crash left", false),
      },
      {{"exhaustive_removes", "crashtest --index skiplist --exhaustive --ops 120 --keys 40 --seed 5", "", ""}});
}

}  // namespace
}  // namespace pmindex::pmemids::skiplist

namespace pmindex::builtin {
index_entry skiplist_entry() { return pmindex::pmemids::skiplist::make_entry(); }
}  // namespace pmindex::builtin

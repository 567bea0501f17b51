// Registry entry of the pmemids `linkedlist` (see linkedlist.hpp).
#include "pmemids/detail/entry.hpp"
#include "pmemids/linkedlist/linkedlist.hpp"
#include "builtin_indexes.hpp"

namespace pmindex::pmemids::linkedlist {
namespace {

index_entry make_entry() {
  return unordered_entry<list>(
      "linkedlist",
      "pmemids append-only linked list in the pool, found through a DRAM hash table rebuilt at open (unordered)");
}

}  // namespace
}  // namespace pmindex::pmemids::linkedlist

namespace pmindex::builtin {
index_entry linkedlist_entry() { return pmindex::pmemids::linkedlist::make_entry(); }
}  // namespace pmindex::builtin

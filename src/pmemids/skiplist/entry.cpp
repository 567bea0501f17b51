// Registry entry of the pmemids `skiplist` (see skiplist.hpp).
#include "pmemids/detail/entry.hpp"
#include "pmemids/skiplist/skiplist.hpp"
#include "builtin_indexes.hpp"

namespace pmindex::pmemids::skiplist {
namespace {

index_entry make_entry() {
  return ordered_entry<list>(
      "skiplist", "pmemids skip list: p = 0.5, 16 levels, values in the nodes (persist: level 0 commits)", 256, true);
}

}  // namespace
}  // namespace pmindex::pmemids::skiplist

namespace pmindex::builtin {
index_entry skiplist_entry() { return pmindex::pmemids::skiplist::make_entry(); }
}  // namespace pmindex::builtin

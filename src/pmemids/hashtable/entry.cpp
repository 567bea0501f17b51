// Registry entry of the pmemids `hashtable` (see hashtable.hpp).
#include "pmemids/detail/entry.hpp"
#include "pmemids/hashtable/hashtable.hpp"
#include "builtin_indexes.hpp"

namespace pmindex::pmemids::hashtable {
namespace {

index_entry make_entry() {
  return unordered_entry<hash_table>(
      "hashtable", "pmemids chained hash table, load factor 0.75, new elements at the chain head (unordered)");
}

}  // namespace
}  // namespace pmindex::pmemids::hashtable

namespace pmindex::builtin {
index_entry hashtable_entry() { return pmindex::pmemids::hashtable::make_entry(); }
}  // namespace pmindex::builtin

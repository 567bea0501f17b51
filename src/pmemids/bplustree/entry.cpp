// Registry entry of the pmemids `bplustree` (see bplustree.hpp).
#include "pmemids/bplustree/bplustree.hpp"
#include "pmemids/detail/entry.hpp"
#include "builtin_indexes.hpp"

namespace pmindex::pmemids::bplustree {
namespace {

index_entry make_entry() {
  return ordered_entry<tree>(
      "bplustree", "pmemids B+-tree: 16-record leaves with a slot bitmap (the 8-byte commit), values in the leaves", 256,
      true);
}

}  // namespace
}  // namespace pmindex::pmemids::bplustree

namespace pmindex::builtin {
index_entry bplustree_entry() { return pmindex::pmemids::bplustree::make_entry(); }
}  // namespace pmindex::builtin

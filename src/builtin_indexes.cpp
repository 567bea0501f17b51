#include "builtin_indexes.hpp"

namespace pmindex::builtin {

std::vector<index_entry> all_entries() {
  index_entry (*const makers[])() = {
      arraylist_entry, artcow_entry,    bplustree_entry, btree_entry,        btree_ref_entry, canary_entry,
      dptree_entry,    fptree_entry,    hashtable_entry, lbtree_entry,       linkedlist_entry, pactree_entry,
      permart_entry,   permart_2log_entry, pmasstree_entry, rbtree_entry,    roart_entry,     skiplist_entry,
      stdmap_entry,    utree_entry,     woart_entry,     wort_entry,
#ifdef PMINDEX_HAVE_ABSL
      btree_dram_entry,
#endif
#ifdef PMINDEX_HAVE_TBB
      tbb_map_entry,
#endif
  };
  std::vector<index_entry> v;
  v.reserve(std::size(makers));
  for (auto make : makers) v.push_back(make());
  return v;
}

}  // namespace pmindex::builtin

// The indexes built into the library: each index's entry.cpp defines its
// function here, and the registry adds every one of them on its first use
// (registry.cpp). An explicit list rather than registration at static
// initialisation, so that linking the static library pulls every index in
// (nothing refers to an object that only registers itself) and the order
// of static initialisation does not matter. See docs/adding-an-index.md.
#pragma once

#include <vector>

#include "pmindex/registry.hpp"

namespace pmindex::builtin {

index_entry arraylist_entry();
index_entry artcow_entry();
index_entry bplustree_entry();
index_entry btree_entry();
index_entry btree_ref_entry();
index_entry canary_entry();
index_entry dptree_entry();
index_entry fptree_entry();
index_entry hashtable_entry();
index_entry lbtree_entry();
index_entry linkedlist_entry();
index_entry pactree_entry();
index_entry permart_entry();
index_entry permart_2log_entry();
index_entry pmasstree_entry();
index_entry rbtree_entry();
index_entry roart_entry();
index_entry skiplist_entry();
index_entry stdmap_entry();
index_entry utree_entry();
index_entry woart_entry();
index_entry wort_entry();
#ifdef PMINDEX_HAVE_ABSL
index_entry btree_dram_entry();
#endif
#ifdef PMINDEX_HAVE_TBB
index_entry tbb_map_entry();
#endif

// Every built-in index's entry (the registry sorts them).
std::vector<index_entry> all_entries();

}  // namespace pmindex::builtin

// Baselines: volatile DRAM indexes a user would otherwise compare against,
// registered like any index so the harness runs them the same way.
//
//   stdmap      std::map (red-black tree) behind a std::shared_mutex
//   btree-dram  abseil's absl::btree_map (Debian libabsl-dev) behind a
//               std::shared_mutex; present when pmindex was built with abseil
//
// Guarantees: linearizable (readers share the lock, writers own it); nothing
// is persistent, so they run in `dram` mode only and a pool holds none of
// their data. Cost: one lock acquisition per operation, no flushes. stats()
// reports the DRAM their nodes take (counted by their allocator).
// The harness's `null` index (does nothing) lives in bench/.
#pragma once

#include "pmindex/index.hpp"

namespace pmindex::baseline {

index_entry make_stdmap_entry();
// Defined only in builds with abseil (PMINDEX_HAVE_ABSL).
index_entry make_btree_dram_entry();
// Adds every baseline of this build to the registry list.
void add_entries(std::vector<index_entry>& v);

}  // namespace pmindex::baseline

// canary: a persistent sorted skip list, the first target of the crash
// checker and the index that exercises the substrate before the real ones.
//
// Guarantees: durably linearizable point operations. Writers are serialised
// by one mutex; readers take no lock (epochs keep removed nodes alive).
// A link or value a reader can see is always durable first: the level-0 link
// is stored with an UNPERSISTED tag bit, persisted, then untagged, and readers
// wait while the bit is set; a value update runs under a per-node seqlock.
// Scans are not snapshots: each returned record was present at some moment
// during the scan, in key order.
//
// Cost per operation (persist mode): insert 2 fences, node lines + 1 link
// line + upper links flushed; update 1 flush + 1 fence; remove 1 fence.
// Only level 0 is the durable truth; after a crash, recovery clears tag bits
// and rebuilds the upper levels from it.
#pragma once

#include <memory>

#include "pmindex/index.hpp"

namespace pmindex::canary {

// Deliberately broken variants for the crash checker's self-test. Only
// honoured in builds with PMINDEX_MUTANTS; each must be caught.
enum class mutant : uint8_t {
  none,
  publish_before_flush,  // links a node before its contents are durable
  flush_without_fence,   // insert returns with its link flushed, not fenced
  torn_16byte,           // update writes two words in two lines, not atomic
  free_before_durable,   // remove frees the node before the unlink is fenced
};
std::optional<mutant> parse_mutant(std::string_view s);
std::string_view to_string(mutant m);

index_entry make_entry();

}  // namespace pmindex::canary

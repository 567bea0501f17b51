// canary: a persistent sorted skip list, the first target of the crash
// checker and the index that exercises the substrate before the real ones.
//
// Guarantees: durably linearizable point operations. Writers are serialised
// by one mutex; readers take no lock (epochs keep removed nodes alive).
// A link or value a reader can see is always durable first: the level-0 link
// is stored with an UNPERSISTED tag bit, persisted, then untagged, and readers
// wait while the bit is set. Scans are not snapshots: sorted, no duplicates,
// every key >= from; each record returned was present at some moment during
// the scan, and every key present for the whole scan is returned (within
// `count`). A reader tests the key of the node it continues from, never
// re-reads a predecessor's link (list.hpp read_succ).
// Only level 0 is the durable truth; after a crash, recovery clears tag bits
// and rebuilds the upper levels from it.
//
// Two layouts (node.hpp), chosen by `keys=` at creation:
//   keys=u64 (canary.cpp): key and value in the node; a value update runs
//     under a per-node seqlock. Per operation (persist mode): insert 2
//     fences, node lines + 1 link line + upper links flushed; update 1 flush
//     + 1 fence; remove 1 fence.
//   keys=bytes (bytes.cpp): the node's kv word names an immutable kv block
//     {key, value} (keys up to 4096 bytes, values up to 128 MiB). Insert: kv
//     block and node flushed, 1 fence, then the level-0 link (tagged store,
//     flush, fence, untag): 2 fences. Update: new kv block flushed, 1 fence,
//     then the kv word swings the same way (tagged, flush, fence, untag): 2
//     fences; the old block is retired once the swing is durable. Remove: 1
//     fence; node and kv block retired.
#pragma once

#include <memory>

#include "pmindex/index.hpp"

namespace pmindex::basic::canary {

// Deliberately broken variants for the checkers' self-tests, in the order of
// its mutant list (tests.cpp); test builds only. The kv_* ones live
// in the keys=bytes layout.
enum class mutant : uint8_t {
  none,
  publish_before_flush,     // links a node before its contents are durable
  flush_without_fence,      // insert returns with its link flushed, not fenced
  torn_16byte,              // update writes two words in two lines, not atomic
  free_before_durable,      // remove frees the node before the unlink is fenced
  kv_publish_before_flush,  // a kv block is published before it is flushed
  kv_free_before_durable,   // remove frees the kv block before the unlink is fenced
  scan_rereads_pred,        // scan re-reads the predecessor's link (an old scan bug)
};

std::unique_ptr<index> make_canary(pm::pool& p, open_kind k, const index_config& c);
std::unique_ptr<index> make_canary_bytes(pm::pool& p, open_kind k, const index_config& c);

}  // namespace pmindex::basic::canary

// PermART: a persistent multiversion adaptive radix tree with linearizable
// range queries ("ART That Lasts", SIGMOD'26), registered as `permart`.
//
// What it is: an ART over 8-byte keys (big-endian bytes), path compressed
// (each inner node stores its full key prefix and the byte it discriminates),
// with multi-pair leaves (small: 2 pairs, big: 14) and three inner kinds:
// sparse (<= 17 children), indirect (<= 64, bitmap + rank) and full (256).
// Synchronisation is ROWEX: readers take no locks; a writer locks the parent
// of what it changes (and the grandparent when a node must be copied to add a
// key byte), builds a new node, and swings one 8-byte slot.
//
// Guarantees:
// - durable linearizability of insert/update/upsert/remove/lookup: a new node
//   is flushed and fenced before it is published; its slot is stored with the
//   UNPERSISTED bit, flushed, fenced, then the bit is cleared. Readers never
//   follow a tagged slot (they wait), so nothing they see can be lost.
// - scan(from, count) and range(lo, hi) are atomic snapshots: each returns
//   exactly the records present at one instant (its snapshot stamp) between
//   its call and return, whatever writers do meanwhile (versioned pointers,
//   see sync/versioned_ptr.hpp).
// - removes never leak: replaced nodes are retired through epochs after their
//   unlink is durable; inner nodes are not shrunk when children go (an empty
//   slot is reused, and empty keys are dropped when the node is next copied).
// - recovery walks from the root, clears UNPERSISTED bits, turns version
//   links into initial-stamp nulls, resets stamps, previous versions and
//   locks; the pool's tracing rebuild then reclaims everything unreachable.
//   No allocation.
//
// Cost (persist mode): every insert/update/remove copies one leaf (or builds
// a small subtree on a split) and pays 2 fences: one after flushing the new
// node(s), one after flushing the slot. Lines flushed: the new leaf (1 or 4
// lines) + the slot line (+ 1 unfenced flush of the slot after untagging).
//
// PermART (2-Log), registered as `permart-2log`: big leaves (3..14 pairs)
// carry two 32-byte log entries (detail/leaf.hpp). An insert/update/remove
// that keeps the leaf within 1..14 pairs appends an entry in place: 1 fence,
// 1 line. The third copies the leaf with both entries and itself applied
// (reconciliation; a split if it no longer fits). Snapshots apply only the
// entries stamped at or below theirs.
//
// Caveats: keys are 8 bytes only; removes copy too, so they need a block:
// a remove takes it from the pool's reserve (one chunk `alloc` keeps back)
// when the pool is otherwise full, after reclaiming this thread's retired
// blocks, and the root keeps one spare version link for a remove to empty.
// Recovery turns every version link into a null slot; tracing frees it.
#pragma once

#include <cstddef>
#include <optional>
#include <string_view>

#include "pmindex/index.hpp"

namespace pmindex::art::permart {

// Limits of the keys=bytes layout (the entry's max_key and max_value).
inline constexpr size_t k_max_key = 4096;
inline constexpr size_t k_max_value = size_t{1} << 20;

// Deliberately broken variants (crash checker, snapshot checker), in the
// order of the entry's mutant list (entry.cpp); test builds only.
enum class mutant : unsigned {
  none,
  publish_before_flush,  // slot stored before the new node's flush is fenced
  flush_without_fence,   // an operation returns with its slot flushed, not fenced
  free_before_durable,   // the replaced node is freed before the swing is durable
  scan_not_atomic,       // scans read current versions, not their snapshot's
  block_unflushed,       // keys=bytes: a key or value block is published without its flush
};

}  // namespace pmindex::art::permart

// PermART: a persistent multiversion adaptive radix tree with linearizable
// range queries ("ART That Lasts", SIGMOD'26), registered as `permart`.
//
// What it is: an ART over byte keys, path compressed (each inner node stores
// its full key prefix and the byte it discriminates), with multi-pair leaves
// and three inner kinds: sparse (<= 17 children) and indirect (<= 64), which
// list their key bytes with their slots (listed.hpp), and full (256).
// Synchronisation is ROWEX: readers take no locks; a writer locks the parent
// of what it changes, builds a new node, and swings one 8-byte slot. A new
// key byte goes into a listed node in place while it has room (the node's
// lock; its count commits the child); a full listed node is copied into the
// next kind (the grandparent's lock too). Two layouts, chosen at creation (`keys=`):
//   keys=u64 (default; tree.hpp): 8-byte keys (big-endian) and values;
//     leaves of 16-byte pairs (small: 2 pairs, big: 14, leaf.hpp); an inner
//     node's prefix and depth fit its header.
//   keys=bytes (bytes_tree.hpp): keys of 0..4096 bytes, values of 0..128 MiB;
//     leaves of 32-byte pairs (small: 3, big: 7, bytes_node.hpp). A pair
//     holds a key of <= 16 bytes inline, else the offset of a key block and
//     the key's hash (a lookup reads the block only on a hash match); a
//     value of <= 8 bytes inline, else the offset of a value block (both kv
//     blocks, common/kv_block.hpp, immutable). A byte inner node appends to
//     its kind's struct an end slot, for the one key equal to its prefix (so
//     a key may be a proper prefix of others), and its whole prefix (depth
//     up to the longest key, in header.prefix).
//
// Guarantees:
// - durable linearizability of insert/update/upsert/remove/lookup: a new node
//   (and a new kv block) is flushed and fenced before it is published; its
//   slot is stored with the UNPERSISTED bit, flushed, fenced, then the bit
//   is cleared. Readers never follow a tagged slot (they wait), so nothing
//   they see can be lost.
// - scan(from, count) and range(lo, hi) are atomic snapshots: each returns
//   exactly the records present at one instant (its snapshot stamp) between
//   its call and return, whatever writers do meanwhile (versioned pointers,
//   see sync/versioned_ptr.hpp). Byte keys: the same slots, the same stamps.
// - removes never leak: replaced nodes are retired through epochs after their
//   unlink is durable; inner nodes are not shrunk when children go (an empty
//   slot is reused, and empty keys are dropped when the node is next copied).
//   A kv block belongs to the leaf that names it: a leaf copy shares the
//   blocks of the pairs it keeps, and the blocks the replaced leaf named
//   that the new one does not (a removed pair's, an updated pair's old
//   value) are retired with it, after the swing is durable.
// - recovery walks from the root, clears UNPERSISTED bits, turns version
//   links into initial-stamp nulls, resets stamps, previous versions and
//   locks, and checks every offset, length and block it will follow
//   (errc::corrupt otherwise); the pool's tracing rebuild then reclaims
//   everything unreachable. No allocation.
//
// Commit words: every change commits by one 8-byte slot store (the root's
// slot, an inner node's child slot or, keys=bytes, its end slot); 2-Log
// entries commit by their meta word.
//
// Cost (persist mode): every insert/update/remove copies one leaf (or builds
// a small subtree on a split, or adds a one-pair leaf to an inner node) and
// pays 2 fences: one after flushing the new node(s) and kv blocks, one after
// flushing the slot (or, for a child added in place, the node's count). Lines flushed: the new
// leaf (u64: 1 or 4 lines; bytes: 2 or 4) + new kv blocks + the slot line (+
// 1 unfenced flush of the slot after untagging). Measured, keys=bytes, 100k
// random keys, per insert / update / remove (lines, fences, allocations):
// 8-byte keys and values 5.6/4.4/3.0, 2, 1.2/1.0/1.5; 24-byte keys (a key
// block) +1 line +1 allocation per insert; 100-byte values (a value block)
// +2 lines +1 allocation per insert and update. keys=u64, fresh inserts into
// 1M random keys: 5.1 lines, 2 fences, 1.1 allocations (10.6 / 2 / 2.0 when a
// new key byte copied its node).
//
// PermART (2-Log), registered as `permart-2log`: big leaves carry two log
// entries (u64: 32 bytes, leaf.hpp; bytes: one line each, bytes_node.hpp).
// An insert/update/remove that keeps the leaf within its capacity appends
// an entry in place: 1 fence, 1 line (keys=bytes: its new kv blocks, if any,
// take their lines and 1 more fence before the entry's meta). The third
// copies the leaf with both entries and itself applied (reconciliation; a
// split if it no longer fits). Snapshots apply only the entries stamped at or
// below theirs. A logged removal names its key's block, so blocks a log
// entry supersedes are retired at reconciliation, not at the append.
//
// Full pools: removes copy too (a leaf without the pair, or a version link
// when the leaf empties), so they need a block, yet a remove must never be
// refused. The pool keeps a small remove reserve (pm::pool::
// keep_for_removes: 16 blocks per leaf shape, which inserts cannot take,
// so they report pool_full that much earlier). On a full pool a remove
// takes from it a block of the class of the leaf it replaces (a copy of
// that leaf's shape, or a link of that size), and the leaf it retires pays
// the block back once reclaimed; a remove that finds it empty waits,
// unpinned, for that (write_retry). The reserve is DRAM bookkeeping over
// free space: the commit protocol, flushes and fences are those of any
// remove, and recovery takes the reserve again after tracing. Space freed
// by removes comes back: a slot a remove empties holds a version link (for
// older snapshots; on a full pool a leaf-sized reserve block) only until no
// snapshot can be older than it. The remove notes the link's key, stamp and
// epoch in DRAM; once the pool's epoch has moved 2 past the note (every
// thread pinned since took its snapshot stamp after the link's), a later
// write (up to 2 notes per write, all at close) walks to the slot and, if
// it still holds a link stamped no later, stores null and retires the link:
// no flush and no fence (both words mean null; recovery nulls every link
// without reading it), core::clear_link. A 16 MiB pool filled, emptied and
// refilled now takes 90-107% of the first fill (tests/unit/
// full_pool_refill_test.cpp; before: 0% u64, 76-91% keys=bytes). Left:
// inner nodes emptied by removes stay (an empty slot is reused by a later
// key with the same path; keys=bytes: 1.2 MB of empty sparse nodes after
// removing 160k 23-byte keys). Recovery turns every version link into a
// null slot; tracing frees it.
//
// keys=bytes: deep key chains make deep trees (one node per distinct prefix
// length), and a byte inner node repeats its whole prefix.
#pragma once

#include <cstddef>
#include <optional>
#include <string_view>

#include "common/kv_block.hpp"
#include "pmindex/index.hpp"

namespace pmindex::art::permart {

// Limits of the keys=bytes layout (the entry's max_key and max_value).
inline constexpr size_t k_max_key = 4096;
inline constexpr size_t k_max_value = common::k_max_value;

// Deliberately broken variants (crash checker, snapshot checker), in the
// order of its mutant list (tests.cpp); test builds only.
enum class mutant : unsigned {
  none,
  publish_before_flush,  // slot stored before the new node's flush is fenced
  flush_without_fence,   // an operation returns with its slot flushed, not fenced
  free_before_durable,   // the replaced node is freed before the swing is durable
  scan_not_atomic,       // scans read current versions, not their snapshot's
  block_unflushed,       // keys=bytes: a key or value block is published without its flush
  link_nulled_early,     // a removed slot's version link is nulled without waiting for its grace period
  count_before_child,    // a child added in place: its count is stored before its leaf, byte and slot are durable
};

}  // namespace pmindex::art::permart

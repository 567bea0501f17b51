// WORT: Write Optimal Radix Tree (Lee et al., FAST'17), 8-byte keys.
//
// A radix tree with 4-bit digits (16 children per node, one node kind),
// path compressed; each node's 8-byte header {depth, prefix length, prefix
// digits} is written with one atomic store. An insert builds its new subtree
// (a leaf, or a node holding the new and the old leaf), flushes it and
// publishes it with one 8-byte pointer store (flush, fence). A prefix split
// makes the new parent, rewrites the old node's header atomically, then
// swings the grandparent pointer; a crash in between is repaired by recovery
// (depth disagrees with position; header rebuilt from the leaves below).
//
// Guarantees: durably linearizable point operations; every change commits
// with one 8-byte failure-atomic store; no logging. Scans run under the
// shared lock, so they are atomic snapshots.
// Threads: the original is single-threaded; here one std::shared_mutex
// (writers exclusive, lookups and scans shared) lets the harness run it on
// several threads. A writer persists before it unlocks, so readers never see
// an unpersisted state.
// Cost: insert ~2 flushes, 2 fences (leaf + one child word), ~3 flushes,
// 3 fences when a prefix splits; update 1 + 1; remove 1 + 1.
// Caveats: nodes with one child are left in place unless that child is a
// leaf; the shared code is in art/detail/ (tree.hpp).
#pragma once

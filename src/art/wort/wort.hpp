// WORT: Write Optimal Radix Tree (Lee et al., FAST'17), 8-byte keys
// (keys=u64, the default) or byte-string keys (keys=bytes).
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
// with one 8-byte failure-atomic store; no logging. Scans exclude writers
// (the writer gate), so they are atomic snapshots.
// Threads: the original is single-threaded; here optimistic lock coupling
// on per-node version locks (art/detail/node_locks.hpp): lookups write
// nothing and read no versions (they check the writer gate, or the locks of
// the nodes they passed, at the end), writers lock only the nodes they change and persist
// before they unlock, so readers never see an unpersisted state; writers on
// different nodes run in parallel.
// Cost: insert ~2 flushes, 2 fences (leaf + one child word), ~3 flushes,
// 3 fences when a prefix splits; update 1 + 1; remove 1 + 1.
//
// keys=bytes (art/detail/bytes_layout.hpp, bytes_tree.hpp; the paper ran
// WORT with string keys under memcached): keys of 0..4096 bytes are strings
// of 4-bit digits (8193 positions: the header's depth and prefix length are
// 16 bits, 8 prefix digits stored); each node has one more word, its
// END-OF-KEY leaf, so a key may be a proper prefix of another; a leaf is a
// kv block {klen, vlen, key, value} (values up to 128 MiB) named by one child,
// end-of-key or root word. Every change still commits with one 8-byte store:
// an insert flushes the new block (L lines) and then publishes it as above
// (L + 1 flushes, 2 fences into an empty word); an update writes a new block
// and swings the word that names the leaf (L + 1, 2 fences), the old block
// retired; a remove clears or swings one word (1 + 1). Half-done splits are
// detected and repaired as for u64 keys. Scans and ranges are atomic
// snapshots (writers excluded) in both layouts.
// Caveats: nodes with one child are left in place unless that child is a
// leaf; the shared code is in art/detail/ (tree.hpp, bytes_tree.hpp,
// nodes.hpp).
#pragma once

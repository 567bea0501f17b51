// ART+CoW (Lee et al., FAST'17, the paper's baseline), 8-byte keys
// (keys=u64, the default) or byte-string keys (keys=bytes).
//
// ART with WOART's in-place Node48 and Node256 updates, and copy-on-write
// for everything else: a change to a Node4 or Node16 copies the node with
// the change, flushes it and swings the parent pointer; a prefix split
// copies the split node with its new header, so no half-done state exists.
//
// Guarantees: durably linearizable point operations; every change commits
// with one failure-atomic store; scans are atomic snapshots (they exclude
// writers).
// Threads: per-node version locks (art/detail/node_locks.hpp: lookups read
// no versions and check once at the end, writers lock the nodes they
// change and the parent of a node
// they copy); readers never see unpersisted state.
// Cost: insert into a Node4/16 flushes the node copy (1-3 lines) + the leaf
// + the parent word, 2 fences; Node48/256 as WOART.
//
// keys=bytes: the byte layout of WOART (art/detail/bytes_tree.hpp: 4096-byte
// keys, end-of-key words, kv-block leaves, out-of-place updates with one
// word swung). The end-of-key word is an 8-byte word, so it is set and
// cleared in place in every node kind, Node4/16 included.
// Caveats: a remove from a Node4/16 needs a block for the copy; with the pool
// full it commits in place instead (equally atomic). Nodes never shrink.
#pragma once

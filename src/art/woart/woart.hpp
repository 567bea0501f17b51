// WOART: Write Optimal Adaptive Radix Tree (Lee et al., FAST'17), 8-byte
// keys (keys=u64, the default) or byte-string keys (keys=bytes).
//
// ART (8-bit digits, node kinds 4/16/48/256, path compression) made
// failure-atomic without logging: Node4 keeps its 4 partial keys, count and
// sorted order in one 8-byte word written last; Node16 appends into a free
// slot and commits with its 16-bit bitmap; Node48 writes the child word
// first, then its index byte; Node256 stores the child word as WORT. A full
// node is copied into the next kind and the parent pointer swung. Prefix
// splits rewrite the header atomically, then swing the parent (as WORT;
// recovery repairs the state between the two).
//
// Guarantees: durably linearizable point operations; every change commits
// with one failure-atomic store (8 bytes, or the Node48 index byte); scans
// are atomic snapshots (they exclude writers).
// Threads: single-threaded in the paper; here per-node version locks
// (art/detail/node_locks.hpp: lookups read no versions and check once at
// the end, writers lock the nodes they
// change); readers never see unpersisted state.
// Cost: insert ~2-3 flushes, 2 fences in place; a node growth flushes the
// whole new node (up to 33 lines for Node256); update 1 + 1.
//
// keys=bytes (art/detail/bytes_tree.hpp): one 8-bit digit per key byte, keys
// of 0..4096 bytes, values up to 128 MiB. Every node kind has one more word,
// its END-OF-KEY leaf (Node4: in its pad; the others: after the node), set
// and cleared with one 8-byte store, so a key may be a proper prefix of
// another; headers hold 16-bit depths and 4 prefix digits. A leaf is a kv
// block (common/kv_block.hpp) flushed before the commit that publishes it:
// an insert costs the block's L lines + the node kind's u64 protocol
// (measured with 8-byte keys and values: 3.2 flushes, 2 fences on average);
// an update is out of place (new block, then one word swung: L + 1, 2
// fences); a remove clears or swings one word (1 + 1). Mutant
// `bytes_leaf_unflushed` publishes a block unflushed (caught by crashtest).
// Caveats: nodes never shrink to a smaller kind (a node left with one leaf
// is replaced by the leaf).
#pragma once

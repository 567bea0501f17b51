// WOART: Write Optimal Adaptive Radix Tree (Lee et al., FAST'17), 8-byte keys.
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
// are atomic snapshots (shared lock).
// Threads: single-threaded in the paper; here a std::shared_mutex, writers
// exclusive, readers shared; readers never see unpersisted state.
// Cost: insert ~2-3 flushes, 2 fences in place; a node growth flushes the
// whole new node (up to 33 lines for Node256); update 1 + 1.
// Caveats: nodes never shrink to a smaller kind (a node left with one leaf
// is replaced by the leaf).
#pragma once

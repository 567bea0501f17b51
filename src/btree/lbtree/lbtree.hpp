// lbtree: LB+-Tree (Liu et al., "LB+-Trees: Optimizing Persistent Index
// Performance on 3DXPoint Memory", VLDB'20): 8-byte keys and values
// (keys=u64, the default), or byte-string keys of up to 4096 bytes and values
// of up to 128 MiB (keys=bytes; Part Two, VLDB'22, ran it with byte keys).
//
// What it is: 256-byte persistent leaves (4 cache lines, 14 entries) in a
// chain, DRAM inner nodes (15 separator keys by default) rebuilt from the
// chain at every open. The leaf header (bitmap, alternate bit, 14 one-byte
// fingerprints) is 16 bytes in line 0; fingerprints are compared with one
// 16-byte SIMD compare. Entry moving keeps free slots in line 0 so most
// inserts write and flush that one line. Layout: lbtree/leaf.hpp; shared
// tree logic: btree/detail/hybrid_core.hpp, inner_layer.hpp; keys=u64:
// detail/hybrid_tree.hpp; keys=bytes: detail/hybrid_bytes.hpp, keys.hpp.
//
// keys=bytes: the same 256-byte leaf, each slot {8-byte key prefix, offset
// of the record's kv block (key, then value)}, the fingerprint a hash of the
// whole key; a search reads a key's bytes only when fingerprint and prefix
// match. The low fence word is the offset of a key block made by the split
// that links the leaf (0 for the head: the empty key); the DRAM inner layer
// keeps copies of the fences. Commit words: meta (insert, remove, entry
// moves, splits, as for u64) and the slot's value word (update: a new block,
// then one 8-byte store; the old block is retired through the epochs once
// the store is durable).
//
// Guarantees: durably linearizable insert / update / remove / lookup. The
// paper's HTM is replaced by optimistic version locks (a striped DRAM table,
// one lock per leaf in practice; readers validate, writers lock and persist
// before unlocking) and a lock-free inner layer validated by fence keys (see
// hybrid_tree.hpp). Splits are logless: two sibling slots, the new leaf is
// written to the spare one, and one 8-byte store of the leaf's meta word
// (bitmap + alternate bit) drops the moved entries and switches the live
// sibling. A remove that empties a leaf (not the head) unlinks it: one
// 8-byte store of the left neighbour's two links (the live one changed),
// persisted, then the leaf is retired through the epochs (hybrid_core.hpp,
// "Empty leaves"). An allocated but unlinked leaf is reclaimed by the
// pool's tracing recovery. Scans are not snapshots: per-leaf consistent, keys strictly
// increasing, every record present for the whole scan is returned.
//
// Misses: as in the original, a leaf's 4 lines are asked for together
// before its header is read, by lookups (hybrid_core.hpp, read_leaf) and by
// writers before they take the lock (lock_leaf): the slot an operation
// reads is known only from the fingerprints, and without the prefetch each
// line is a miss of its own. As the original prefetches its 256-byte inner
// nodes, the DRAM inner layer asks for a node's lines before its binary
// search (nodes are line-aligned, inner_layer.cpp). Measured under PiBench
// against the original (its PMEM build, clwb + sfence, HTM replaced by one
// spin lock as this CPU has none; 1M records, 1 thread): lookups at 1.0x
// the original, updates at about 0.9x, inserts at about 0.7x. What the
// original has no counterpart of: the striped lock word read per leaf (its
// HTM reads none), the epoch pin of every operation (its locked
// instruction is also where the previous operation's clwb is waited for, so
// it moves that wait rather than adding one), and the inner layer's
// writer mutex and version word at each split.
//
// Cost (persist mode): insert 1 line + 1 fence when line 0 has a free slot,
// else 2 lines + 2 fences (entry moving); update, remove 1 line + 1 fence; a
// split adds 4 + 1 + 1 lines and 3 fences; a remove that empties a leaf
// adds 1 line, 1 fence (the unlink). keys=bytes, with B the lines of
// the record block (ceil((8 + key + value) / 64), +1 if it straddles a
// line): insert B + 1 lines + 2 fences when line 0 has a free slot (the
// block lies outside line 0, so it is fenced before the line-0 stores), else
// B + 2 lines + 2 fences; update B + 1 lines, 2 fences; remove 1 line,
// 1 fence; a split adds the fence key block's lines
// (LbtreeBytes.FlushesPerOperation).
//
// Caveats: relies, like the paper, on stores to one cache line reaching
// memory in program order (the crash model's "prefix of its stores").
// Leaves are unlinked only when empty (no merge of two half-empty leaves);
// every operation pins the pool's epoch. Each leaf spends 8 bytes on a low fence key, so
// sibling links are 32-bit (offset / 64): pools up to 256 GiB. Parameter
// ("inner=15"): separator keys per DRAM inner node.
#pragma once

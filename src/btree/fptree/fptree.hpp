// fptree: FPTree (Oukid et al., "FPTree: A Hybrid SCM-DRAM Persistent and
// Concurrent B-Tree for Storage Class Memory", SIGMOD'16), 8-byte keys and
// values.
//
// What it is: leaves in the pool, inner nodes in DRAM, rebuilt from the leaf
// chain at every open (created, clean or dirty: nothing of them is
// persisted). Leaves are unsorted with a validity bitmap, one-byte key
// fingerprints scanned first (one AVX-512/AVX2 compare for 64 slots), a
// sibling pointer and a lower fence key. Layout: fptree/detail/leaf.hpp;
// shared tree logic: btree/detail/hybrid_tree.hpp, inner_layer.hpp.
//
// Guarantees: durably linearizable insert / update / remove / lookup. The
// paper's HTM is replaced by an optimistic version lock per leaf (readers
// validate, writers lock; writers persist before unlocking) and a lock-free
// inner layer validated by the leaves' fence keys (see hybrid_tree.hpp).
// Leaf splits are logless: new leaf persisted, then link + bitmap in one line;
// the one torn state (link without bitmap) is repaired at recovery. An
// allocated but unlinked leaf is reclaimed by the pool's tracing recovery;
// trace() reports the anchor block and the leaf chain. Scans are not
// snapshots: per-leaf consistent, keys strictly increasing, every record
// present for the whole scan is returned.
//
// Cost (persist mode): insert 2 fences, 3 lines flushed (entry, fingerprint,
// bitmap; 2 when two share a line); update and remove 1 line, 1 fence; a
// split (1 insert in ~C/2) adds the new leaf's used lines + 1 line, 2 fences.
//
// Caveats: removes never free leaves (an emptied leaf stays and serves later
// inserts of its range); updates are in place (8-byte values make that
// failure-atomic). Parameters ("leaf=64,inner=128"): slots per leaf (4..64),
// separator keys per DRAM inner node (3..4096).
#pragma once

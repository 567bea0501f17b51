// fptree: FPTree (Oukid et al., "FPTree: A Hybrid SCM-DRAM Persistent and
// Concurrent B-Tree for Storage Class Memory", SIGMOD'16): 8-byte keys and
// values (keys=u64, the default), or byte-string keys of up to 4096 bytes
// and values of up to 128 MiB (keys=bytes; Part Two, VLDB'22, ran it with byte keys).
//
// What it is: leaves in the pool, inner nodes in DRAM, rebuilt from the leaf
// chain at every open (created, clean or dirty: nothing of them is
// persisted). Leaves are unsorted with a validity bitmap, one-byte key
// fingerprints scanned first (one AVX-512/AVX2 compare for 64 slots), a
// sibling pointer and a lower fence key. Fingerprints are compared with the
// widest SIMD the CPU has (chosen at run time: detail/fingerprint.hpp).
// Layout: fptree/leaf.hpp; shared tree logic: btree/detail/hybrid_core.hpp,
// inner_layer.hpp; keys=u64: detail/hybrid_tree.hpp; keys=bytes:
// detail/hybrid_bytes.hpp and detail/keys.hpp.
//
// keys=bytes: the same leaf, each slot {8-byte key prefix, offset of the
// record's kv block (key, then value)}, the fingerprint a hash of the whole
// key; a search reads a key's bytes only when fingerprint and prefix match.
// The low fence word is the offset of a key block made by the split that
// links the leaf (0 for the head: the empty key); the DRAM inner layer keeps
// copies of the fences. Commit words: the bitmap (insert, remove, split, as
// for u64) and the slot's value word (update: a new block, then one 8-byte
// store; the old block is retired through the epochs once it is durable).
//
// Scans: leaves are unsorted, so a scan orders each leaf it reads. Each leaf
// keeps a SCAN ORDER HINT after its entries: its slots in key order, stored
// by the last scan that had to sort the leaf, never by writers, never
// flushed, trusted only after a check against the leaf's live slots and
// keys (detail/hybrid_core.hpp). A scan of leaves no writer changed since
// reads them in order instead of ranking up to 64 keys per leaf (the
// ranking was half of a scan100).
// LAYOUT CHANGE: a pool of the leaf layout before the hint (root magic
// k_magic_v1, leaves 64 bytes shorter) is refused with errc::bad_version
// (exit code 5), one line.
//
// Guarantees: durably linearizable insert / update / remove / lookup. The
// paper's HTM is replaced by an optimistic version lock per leaf (readers
// validate, writers lock; writers persist before unlocking) and a lock-free
// inner layer validated by the leaves' fence keys (see hybrid_tree.hpp).
// Leaf splits are logless: new leaf persisted, then link + bitmap in one line;
// the one torn state (link without bitmap) is repaired at recovery. A
// remove that empties a leaf (not the head) unlinks it: one 8-byte store of
// the left neighbour's link, persisted, then the leaf is retired through
// the epochs (the paper's delete micro-log is replaced by tracing; see
// hybrid_core.hpp, "Empty leaves"). An allocated but unlinked leaf is
// reclaimed by the pool's tracing recovery; trace() reports the anchor
// block and the leaf chain. Scans are not
// snapshots: per-leaf consistent, keys strictly increasing, every record
// present for the whole scan is returned.
//
// Cost (persist mode): insert 2 fences, 3 lines flushed (entry, fingerprint,
// bitmap); update and remove 1 line, 1 fence; a split (1 insert in ~C/2)
// adds the new leaf's used lines + 1 line, 2 fences; a remove that empties
// a leaf adds 1 line, 1 fence (the unlink). keys=bytes, with B the
// lines of the record block (ceil((8 + key + value) / 64), +1 if it
// straddles a line): insert B + 3 lines, 2 fences (the entry's fence orders
// the block too); update B + 1 lines, 2 fences (the block is fenced before
// the swing); remove 1 line, 1 fence; a split adds the fence key block's
// lines (FptreeBytes.FlushesPerOperation). Scans flush nothing; one that
// sorts a leaf stores its hint (8 words, left dirty in the cache).
//
// Caveats: leaves are unlinked only when empty (no merge of two half-empty
// leaves); every operation pins the pool's epoch; u64 updates are in place (8-byte values make that
// failure-atomic). keys=bytes sorts a leaf whose hint is stale by reading
// its keys' blocks (a scan reads every returned record's block anyway; a
// split sorts C keys). Parameters ("leaf=64,inner=128"): slots per leaf
// (4..64), separator keys per DRAM inner node (3..4096).
#pragma once

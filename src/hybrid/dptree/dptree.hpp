// DPTree: differential indexing for persistent memory (Zhou et al., "DPTree:
// Differential Indexing for Persistent Memory", VLDB'20). keys=u64 (the
// default: 8-byte keys and values in the leaf slots) or keys=bytes (each
// record one kv block, common/kv_block.hpp; the slot holds its key's prefix
// word and the block's offset).
//
// Two parts:
//  - the front BUFFER: an ordered DRAM map of the recent writes (upserts and
//    removes as tombstones) with a bloom filter, backed by a PM write-ahead
//    LOG: one 64-byte record per write, written and made durable (1 flush,
//    1 fence; keys=bytes: + the kv block's lines, covered by the same fence)
//    BEFORE the write is applied to the map and acknowledged; except an
//    UPDATE IN PLACE (keys=u64, as the original's upsert): an update of a
//    key no buffer holds stores the new value in the key's base slot
//    (8-byte store, 1 flush, 1 fence; write.cpp, update_in_base; mutant
//    in_place_unflushed), also while a merge runs, unless that merge
//    copies the leaf's records elsewhere (moving_);
//  - the BASE tree: PM leaves of up to 256 records (param `leaf`) in a
//    singly linked chain, each with two metadata copies {next, max key word,
//    count, bitmap of used slots, order array (slots in key order)}; the DRAM
//    inner nodes (btree/detail/inner_layer.hpp) route by each leaf's smallest
//    key and are rebuilt after every merge and at every open.
//
// Which metadata copy is current: a persistent global version word `gen`
// in the root (the number of committed merges; its low bit is the paper's
// global version bit) and a per-leaf stamp {gen g, copy s}: the leaf's
// current copy is s if g <= gen, else the other one (s was written by a
// merge that has not committed). A leaf no merge touched keeps its copy
// for any number of merges, so a merge writes only the leaves it changes.
//
// MERGE (background thread): when the active buffer holds max(merge_min,
// base records * merge_permille / 1000) entries, it is FROZEN (read-only)
// and a second buffer with the next log takes the new writes; lookups
// consult the active buffer, the frozen one, then the base. The merge
// thread walks the frozen entries in key order beside the base leaves:
//   1. new records go to slots that are free in the leaf's current copy (or
//      into new leaves when a leaf overflows; a leaf left empty is unlinked),
//      the other copy of the metadata is written for each changed leaf, and
//      its stamp set to {gen + 1, other copy}; only the changed lines are
//      flushed (slots, the metadata's first line and the order lines in
//      use, the stamp line, new leaves), then ONE fence: none of it is
//      reachable at the current version, so nothing needs ordering before;
//   2. COMMIT: gen = gen + 1, 1 flush + 1 fence (the version flip), under the
//      structure lock (no operation runs), with the new inner nodes swapped
//      in and the frozen buffer dropped. The fence of step 1 is what makes
//      every stamp durable before the flip (mutant flip_before_flush);
//   3. after the commit is durable: replaced and removed records' blocks,
//      superseded buffer blocks and unlinked leaves are freed (a tombstone
//      borrows the block of the record it removes and frees nothing),
//      and the frozen buffer's log is recycled (mutant log_truncated_early
//      recycles it before the commit).
//
// LOG: two logs per stripe (root.log[0..1][0..15]), chains of 4 KiB
// chunks; buffer number t (t = gen for the active buffer, or gen + 1 while
// buffer gen merges) writes log[t % 2][s] for a key of stripe s (the top 4
// bits of a hash of its bytes that no build changes), every record tagged t
// and checksummed. Replay accepts, from each log's start, the records with
// the expected tag and a good checksum and stops at the first other one:
// the writes of a stripe are serialised by its lock (slot order = apply
// order) and each record is durable before the next of its stripe starts,
// so only a log's last can be torn; a key's records are all in one log, so
// the logs replay in any order (a record outside its key's stripe is
// refused: corrupt, mutant log_by_thread). A log's chunks are kept and
// reused by buffer t + 2 (older tags never match); recycling is free.
// keys=bytes: an upsert's record names its kv block and holds a hash of its
// bytes (the block is flushed under the record's fence, so a crash may leave
// the record of a write in flight durable without its block: replay stops
// there, as at a torn record); a remove's record names
// the block of the record it removes (which holds the key and lives until the
// merge that applies the tombstone commits), so a remove allocates nothing.
//
// RECOVERY (every open; nothing allocated, so tracing follows): stamps of an
// uncommitted merge (g > gen) are reset to the current copy, the leaf chain
// is walked and the inner nodes rebuilt; log[gen % 2] is replayed into a
// buffer (tag gen), then log[(gen+1) % 2] (tag gen + 1): if that one holds
// records, the first buffer is frozen again and its merge resumes at the
// first write (reads change nothing: a recovered pool's heap is what tracing
// found until something is written). A clean close merges every buffer first, so a clean open
// finds no record to replay (stats: replayed).
//
// THREADS (the original's writers run in parallel on its
// optimistic-lock buffer tree; ours did not until the striped log):
//  - the structure lock is a big-reader gate (sync/writer_gate.hpp): every
//    operation passes it on a line of its own thread's; the freeze, the
//    commit and check() close it;
//  - a writer holds its key's STRIPE lock (16, by the key's hash) for its
//    presence check, log record and map entry, so writers of different
//    stripes check, append and flush their records in parallel; the map
//    itself (one B-tree per buffer, so scans merge one sorted source, not
//    sixteen) is locked exclusively only for the entry's insertion;
//  - a point read takes the map's lock (shared) only when the buffer's bloom
//    filter names its key (an entry is in the filter before the map);
//  - the frozen buffer and the current base are immutable while shared;
//    scans hold the active map's lock (shared) throughout: an atomic
//    snapshot (a write logged but not yet applied has not returned).
// Why stripes and not the original's per-key optimistic locks in a
// concurrent tree: the log must hold a key's records in apply order for
// replay; per-thread logs would need a global sequence number per record
// (one contended counter) and a merge of all logs at replay; a stripe's log
// keeps the order by its lock, and replay stays a pass per log.
// Merges run beside the writers on a core of their own (the thread does
// not take the CPU of the writer that started it: common/background_thread.hpp);
// on 2 cores a second writer thread competes with the merge thread.
//
// Bugs of the original avoided (tests/unit/dptree_test.cpp): removes exist;
// recovery exists (the log is replayed); an existing pool reopens; a key in
// both the buffer and the base is scanned once, with the newest value.
// Caveats: the merge thread rebuilds the inner nodes (a pass over the leaf
// list) at every merge.
// FULL POOLS (tests/unit/full_pool_refill_test.cpp): a remove
// always succeeds, and a pool emptied by removes fills again.
//  - PARTIAL MERGE: a leaf that needs a new leaf the pool cannot give stays
//    one leaf: its removes apply, its new records take the slots free at
//    the current version, and the rest is CARRIED: appended to the active
//    buffer's log (1 flush per record, 1 fence for all), durable before the
//    commit recycles the frozen log (mutant carry_after_commit); an entry
//    the active buffer holds a newer one of is not carried. The commit
//    then refuses new upserts (pool_full) until a merge places everything.
//  - LOG ROOM kept for the carry, so that a merge never fails (each rule
//    per stripe: a key's carried record goes to its stripe's log): a write
//    appends only if the active log keeps room for every upsert of the
//    frozen buffer, and a new upsert entry only if the other log (the next
//    buffer's) has room for every upsert of the active one; chunks are
//    linked (2 flushes, 2 fences per 63 records) or the write fails with
//    pool_full. After a commit the recycled log gives back the chunks
//    beyond twice what the next buffer needs (trim_log), unless a buffer
//    frozen since the commit writes to it already (mutant trim_active_log).
//  - A write that finds no room while a merge runs waits for it and tries
//    again; a remove with no merge running merges the active buffer
//    however small (at most k_forced_merges times). Removes free base
//    slots, so a few merges always make room. An insert or update with no
//    room (log, leaves, keys=bytes its record's block) does the same when
//    the active buffer holds removes or superseded blocks: removes make
//    room at once, not when later writes make the buffer due. The merge
//    thread gives what it freed back to the shared heap (its cache would
//    keep it from the writers).
//  - THROTTLE: a writer that finds the active buffer due while a merge
//    runs waits for that merge (buffers stay near the threshold).
// keys=bytes: a remove record may name a block no leaf or upsert owns any
// more (its frozen record was not carried): the record keeps it until its
// buffer's merge commits (trace(), replay()).
//
// FINGERPRINTS: each base leaf holds a one-byte fingerprint per
// slot (detail::fingerprint of the slot's whole key: u64, or the key's bytes
// for keys=bytes), so a point lookup in the base (and every presence check
// of a write and of replay: find()) compares the fingerprints of the used
// slots, 64 at a time (one SIMD compare per 64-byte line, masked by the
// current copy's bitmap), and reads only the keys of the matches: ~1 key
// line for a present key, ~count/256 for an absent one, against the binary
// search through the order array (8 dependent probes, each an order line
// and a slot line) it replaces. Scans and the merge walk keep the order
// array. They live IN THE PM LEAF, beside the metadata copies, not in DRAM:
//  - no versioning: a fingerprint is written with its slot, while the slot
//    is free at the current version (the merge's step 1), and a reader
//    looks only at the slots in its copy's bitmap; the fingerprint line is
//    flushed with the slot lines under the merge's one fence, so a slot is
//    never in a committed bitmap without its fingerprint durable;
//  - the cost is paid by the merge, which is in the background: per changed
//    leaf, one more line per 64-slot group that received a new record (at
//    most 4; merge_flushes_per_record in stats), 256 bytes more per leaf
//    (the leaf block grows from 768 to 1024 bytes: ~1.7 bytes per record at
//    58% fill; 2.5 measured at 1M), and nothing at
//    open;
//  - in DRAM they would be rebuilt at every open from every record (for
//    keys=bytes a read of every kv block), which DPTree's recovery does not
//    do now (it reads each leaf's metadata only), and at every merge for the
//    leaves it changed; they would also add 256 bytes per leaf of DRAM.
// The original (zxjcarrot/DPTree-code, include/dptree.hpp) keeps its
// fingerprints in PM too, inside each metadata copy's bitmap, and places a
// record at a slot derived from its hash; ours keep the free-slot placement
// and need no copy per version (the copies stay one line of bitmap each).
// check() recomputes every fingerprint (mutants fingerprint_skipped,
// fingerprint_unflushed). The merge thread writes a free slot's
// fingerprint while readers compare its line: the byte is masked out of
// their result by the bitmap, as the slot itself is never read.
// BASE FILTER: a DRAM bloom filter (the buffers' kind) over the keys of the
// base, so that an insert, whose key is usually new, learns "not in the
// base" from one filter word instead of a probe (inner descent, stamp and
// metadata lines, fingerprint lines: half an insert's foreground time
// under perf at 1M records). It may name keys the base no longer holds
// (removes do not clear bits) and must name every key it holds:
//  - the merge adds each key it places before its commit (writers read the
//    filter meanwhile: an early bit only sends an insert to the base;
//    mutant base_filter_skipped), and builds it anew from every base key at
//    the first merge after an open (until then inserts probe the base: an
//    open reads no record) and when the base outgrows it: sized at 10-20
//    bits per record, built again at 6 (~8% false positives at worst);
//  - a new filter replaces the old one at the commit, under the closed
//    gate; check() looks every base key up in it;
//  - lookups, updates and removes do not ask it (their keys are mostly
//    present: one more miss);
//  - DRAM: 1.25-2.5 bytes per base record (stats: base_filter_bytes).
// The merge does not copy the records that stay in their leaf: it lists
// their slots (2 bytes each) beside the new records, so a merge that
// touches every leaf (a buffer due at 7% of the base reaches most of them)
// allocates 2 bytes per base record, not a copy of the base.
// VERSUS THE ORIGINAL, per operation (measured under PiBench, 1 thread):
//  - its insert is a blind insert into the buffer; ours first looks the
//    key up (an insert of a present key returns false): in the buffers'
//    filters and the base filter, and in the base only when that names
//    the key;
//  - its update in place probes a hash position in the leaf (one or two
//    lines) and takes no lock (an update racing a merge that moves its
//    leaf is lost); ours finds the slot through the fingerprints and takes
//    the stripe, the active buffer's and the move locks;
//  - its lookup reads a slot at the key's hash position in the leaf
//    (records are placed there), so the slot's line can be asked for with
//    the metadata; ours reads the fingerprint lines, then the slot, and
//    its slots live in a block of their own (the leaf's first line names
//    it). Tried and not kept: merges placing each new record at the first
//    free slot from a hash home, and the slot blocks' offsets kept in DRAM,
//    so that a lookup asks for its home's two lines with the header. 86%
//    of lookups at 1M records found their key there, yet throughput moved
//    within the noise (`pmindex bench` lookups 2.50 vs 2.56 Mops/s, medians
//    of 15), while a merge's flushes per record rose from 1.14 to 2.03 (new
//    records on scattered lines, not on the free slots in order).
// LAYOUT CHANGE: a pool of the layout before fingerprints (its root magic,
// k_magic_v1) is refused with errc::bad_version (exit code 5), one line.
//
// FLUSHES AND FENCES PER OPERATION
//  - insert, update, upsert, remove: 1 flush + 1 fence (the log record;
//    keys=bytes: + the kv block's lines, same fence); a write that links a
//    log chunk: + 2 flushes, 2 fences per 63 records of its stripe; an
//    update in place: 1 flush + 1 fence (the slot's value word);
//  - lookup, scan: none;
//  - a merge (background): per changed leaf its new slot lines, their
//    fingerprint lines (<= 4), the metadata copy's first line, its order
//    lines in use, the stamp line, then 1 fence for all; the commit 1 flush
//    + 1 fence; a carry 1 flush per record + 1 fence; trim_log 1 + 1.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <map>

#ifdef PMINDEX_HAVE_ABSL
#include <absl/container/btree_map.h>
#endif
#include <memory>
#include <mutex>
#include <shared_mutex>
#include <string>
#include <string_view>
#include <thread>
#include <type_traits>
#include <unordered_set>
#include <vector>

#include "btree/detail/inner_layer.hpp"
#include "btree/detail/keys.hpp"
#include "common/mutant.hpp"
#include "sync/rw_spin_lock.hpp"
#include "sync/writer_gate.hpp"
#include "pmindex/error.hpp"
#include "pmindex/index.hpp"
#include "pmindex/pm/counters.hpp"

namespace pmindex::hybrid::dptree {

// The key layouts, fingerprints and DRAM inner layer shared with the B+-trees.
namespace detail = btree::detail;

using detail::entry;

// In the order of its mutant list (tests.cpp).
enum class mutant : unsigned {
  none,
  log_unflushed,        // a log record is not flushed before the write is acknowledged
  flip_before_flush,    // the version flips before the next-version metadata is durable
  log_truncated_early,  // the frozen buffer's log is invalidated before the merge commits
  scan_duplicates,      // a scan returns a key of both buffer and base twice (the original's bug)
  carry_after_commit,   // a partial merge carries its unplaced records to the next log after the commit
  fingerprint_skipped,   // a merge writes a new slot without its fingerprint
  fingerprint_unflushed, // a merge writes a new slot's fingerprint but does not flush it
  log_by_thread,         // a writer logs to (and locks) its thread's stripe, not its key's
  in_place_unflushed,    // an update in a base slot is acknowledged before it is durable
  moving_unlisted,       // a merge copies a leaf's records without listing it in moving_
  base_filter_skipped,   // a merge places new records without adding their keys to the base filter
  trim_active_log,       // a merge trims the log it recycled after a buffer frozen since its commit took it
};

// clang-format off
inline constexpr unsigned k_slots = 256;
struct meta {               // one metadata copy: 320 bytes, 64-byte aligned
  uint64_t next;            //   0  next leaf (0: last)
  uint64_t max_key;         //   8  u64: the largest key; bytes: its prefix word (0: empty)
  uint64_t count;           //  16  records
  uint64_t pad;             //  24
  uint64_t bitmap[4];       //  32  used slots
  uint8_t order[k_slots];   //  64  used slots in key order [0, count)
};
struct leaf {               // 960 bytes (allocator class 1024); the records live in a slot block
  uint64_t stamp;           //   0  {gen: 63, copy: 1}: copy s is current iff gen <= root.gen
  uint64_t slots;           //   8  the slot block: min(256, 2 * leaf) entries {key, value}; immutable
  uint64_t pad[6];          //  16
  meta m[2];                //  64  the two copies
  uint8_t fp[k_slots];      // 704  fingerprint of slot i's key; written and flushed with the slot while
                            //      the slot is free at the current version (valid iff the slot is in the
                            //      current copy's bitmap: no copy per version)
};
static_assert(sizeof(meta) == 320 && sizeof(leaf) == 960);

enum rec_op : uint64_t { k_upsert = 1, k_remove = 2 };
struct log_rec {            // one cache line; the line is the unit of a crash
  uint64_t key;             //   0  u64: the key; bytes: the kv block (remove: the removed record's)
  uint64_t value;           //   8  u64: the value; bytes: a hash of the kv block's bytes
  uint64_t op;              //  16  rec_op
  uint64_t pad[3];          //  24
  uint64_t check;           //  48  checksum of {key, value, op, tag}
  uint64_t tag;             //  56  the buffer number; stored last
};
inline constexpr unsigned k_chunk_recs = 63;
struct log_chunk {          // 4 KiB (the largest small block)
  uint64_t next;            //   0  next chunk (0: none yet); set durably before a record goes there
  uint64_t pad[7];          //   8
  log_rec r[k_chunk_recs];  //  64
};
static_assert(sizeof(log_rec) == 64 && sizeof(log_chunk) == 4096);

// The logs are striped: a key's records always go to the log of its
// stripe (stripe_of: the top bits of a hash that never changes across
// builds), so the records of one key are in one log, in the order they
// were applied, and writers of different stripes append in parallel.
inline constexpr unsigned k_stripes = 16;
struct root_block {
  uint64_t magic;           //   0
  uint64_t gen;             //   8  committed merges: the commit word of a merge
  uint64_t head;            //  16  the first leaf; never changes
  uint64_t leaf_cap;        //  24  the `leaf` parameter it was built with
  uint64_t stripes;         //  32  k_stripes
  uint64_t pad[3];          //  40
  uint64_t log[2][k_stripes];  // 64  first chunk of each log: buffer t's stripe s writes log[t % 2][s]
};
// clang-format on

// One index over a key policy (u64_keys or byte_keys); both sets of calls
// work on both (as in PACTree).
template <class K>
class tree final : public bytes_index {
  using base = bytes_index;
  static constexpr bool k_bytes = K::k_blocks;

 public:
  // A key as the buffer stores it and as everything compares it.
  using ukey = std::conditional_t<k_bytes, std::string_view, uint64_t>;
  using bkey = std::conditional_t<k_bytes, std::string, uint64_t>;
  // "DTP3_u64" / "DTP3byts" (little-endian): striped logs.
  static constexpr uint64_t k_magic = k_bytes ? 0x7374796233505444ull : 0x3436755f33505444ull;
  // Older layouts, refused with a clear error: "DTPB_u64" / "DTPBytes" (before
  // fingerprints), "DTP2_u64" / "DTP2byts" (one log per buffer).
  static constexpr uint64_t k_magic_v1 = k_bytes ? 0x7365747942505444ull : 0x3436755f42505444ull;
  static constexpr uint64_t k_magic_v2 = k_bytes ? 0x7374796232505444ull : 0x3436755f32505444ull;

  tree(pm::pool& p, open_kind kind, const index_config& cfg);
  ~tree() override;

  using base::insert, base::update, base::upsert, base::remove, base::lookup, base::scan, base::range;
  bool insert(uint64_t k, uint64_t v) override;
  bool update(uint64_t k, uint64_t v) override;
  bool upsert(uint64_t k, uint64_t v) override;
  bool remove(uint64_t k) override;
  std::optional<uint64_t> lookup(uint64_t k) override;
  size_t scan(uint64_t from, size_t count, record* out) override;
  size_t range(uint64_t lo, uint64_t hi, std::vector<record>& out) override;
  bool insert(std::string_view k, std::string_view v) override;
  bool update(std::string_view k, std::string_view v) override;
  bool upsert(std::string_view k, std::string_view v) override;
  bool remove(std::string_view k) override;
  bool lookup(std::string_view k, std::string* v) override;
  size_t scan(std::string_view from, size_t count, record_buffer& out) override;
  size_t range(std::string_view lo, std::string_view hi, record_buffer& out) override;

  check_result check() override;
  void trace(pm::pool::trace_sink& sink) override;
  index_stats stats() override;
  void close() override;
  void abandon() override;

 private:
  enum class wop { insert, update, upsert, remove };
  struct bval {
    uint64_t word;  // u64: the value; bytes: the kv block
    bool tomb;
  };
  // The buffer's ordered map: a B-tree as the original's buffer tree
  // (abseil's; std::map where abseil is missing). A change holds the
  // buffer's lock exclusively (and its key's stripe's lock); a read holds it
  // shared, or every stripe's lock (carry), or reads a frozen buffer: no
  // iterator outlives a change.
#ifdef PMINDEX_HAVE_ABSL
  using buffer_map = absl::btree_map<bkey, bval, std::less<>>;
#else
  using buffer_map = std::map<bkey, bval, std::less<>>;
#endif
  // A blocked bloom filter: a key's two bits are in one 64-bit word (one
  // miss per probe, not two: a write probes it and a lookup probes both
  // buffers'; with two words the filter took a fifth of an update's
  // foreground time under perf). ~1.5% false positives at the 16
  // bits per entry it is sized for.
  struct bloom {
    std::unique_ptr<std::atomic<uint64_t>[]> w;
    uint64_t bits = 0;
    void reset(uint64_t want_bits);
    void add(uint64_t h) noexcept;
    bool maybe(uint64_t h) const noexcept;
    void prefetch(uint64_t h) const noexcept {  // the word maybe(h) reads
      if (bits) __builtin_prefetch(&w[h & (bits / 64 - 1)]);
    }
  };
  // A buffer's place in the log of one stripe; guarded by that stripe's
  // lock (a frozen buffer's: immutable).
  struct alignas(64) cursor {  // a line each: writers of other stripes write theirs
    log_chunk* chunk = nullptr;  // where the next record goes
    unsigned pos = 0;
    uint64_t used = 0;     // records in the log
    uint64_t upserts = 0;  // its keys' entries that are not tombstones (each may have to be carried)
  };
  struct buffer {
    // The map's lock: a writer holds it exclusively only to apply its entry
    // (its presence check and log record happen under its stripe's lock);
    // readers hold it shared, and only when the filter names their key;
    // scans hold it shared throughout (an atomic snapshot).
    common::rw_spin_lock mu;
    buffer_map map;
    std::atomic<uint64_t> entries{0};  // map.size(), for readers without the lock
    bloom filter;
    uint64_t tag = 0;
    cursor cur[k_stripes];
    std::vector<uint64_t> garbage;      // bytes: blocks to free once this buffer's merge commits (under mu)
    std::atomic<uint64_t> carried{0};   // entries a partial merge moved here (not counted towards a merge)
  };
  // The writers of one stripe's keys: presence check, log record and map
  // entry in one critical section, so the stripe's log is in apply order.
  // It also guards the room of the stripe's two logs.
  struct alignas(64) stripe {
    std::mutex mu;
    log_chunk* tail[2] = {nullptr, nullptr};  // each log's last chunk
    uint64_t cap[2] = {0, 0};                 // and the records its chunks hold
    std::atomic<int64_t> live{0};             // records its writes added (or removed) since the open
  };
  using items_t = std::vector<std::pair<ukey, bval>>;
  // A record as a merge moves it: its slot words and, if it stays where it
  // is, its slot in the leaf being rewritten (-1: a new slot).
  struct mrec {
    entry e;
    int slot;
    uint8_t fp;  // its key's fingerprint (an existing record's: copied from its leaf)
  };
  // A leaf as the merge writes it. A leaf that keeps its place lists its
  // records in key order in `seq`: a slot it keeps (>= 0) or ~j for recs[j],
  // a record that takes a free slot; a new leaf has no seq (recs alone, in
  // order). The records that stay are not copied: a merge that touches
  // every leaf would otherwise copy the whole base into DRAM.
  struct out_leaf {
    uint64_t off;  // the leaf (a new one when fresh)
    bool fresh;
    std::vector<mrec> recs;
    std::vector<int16_t> seq;
    entry first{}, last{};  // its smallest and largest records (n > 0)
    size_t size() const noexcept { return seq.empty() ? recs.size() : seq.size(); }
  };
  struct plan {
    size_t index;  // in leaves_
    std::vector<out_leaf> outs;
  };

  // --- leaves (tree.cpp)
  leaf* at(uint64_t off) const noexcept { return p_.template ptr<leaf>(off); }
  unsigned cur_copy(const leaf* l) const noexcept;
  const meta& cur(const leaf* l) const noexcept { return l->m[cur_copy(l)]; }
  ukey key_of(const entry& e) const noexcept {
    if constexpr (k_bytes)
      return common::kv_key(p_, e.value);
    else
      return e.key;
  }
  entry* slots(const leaf* l) const noexcept { return p_.template ptr<entry>(l->slots); }
  ukey slot_key(const leaf* l, unsigned s) const noexcept { return key_of(slots(l)[s]); }
  ukey min_of(size_t li) const noexcept {  // leaves_[li] (not the head) holds records
    const leaf* l = at(leaves_[li]);
    return slot_key(l, cur(l).order[0]);
  }
  uint64_t new_leaf();  // both blocks; throws pool_full
  void free_leaf(uint64_t off);
  typename K::key layer_key(const entry& e) const noexcept { return K::of(p_, e.key, e.value); }
  // Position of the first record >= k in the leaf's current order (scans).
  unsigned lower(const leaf* l, const meta& m, ukey k, bool* found) const noexcept;
  static uint8_t fp_of(ukey k) noexcept { return detail::fingerprint(k); }
  // The slot of m's bitmap holding k, or -1: fingerprints first, then the
  // keys of the matching slots.
  int slot_of(const leaf* l, const meta& m, ukey k) const noexcept;
  void prefetch_probe(const leaf* l) const noexcept;  // the lines slot_of and cur() read
  uint64_t leaf_for(ukey k) const noexcept;
  bool base_find(ukey k, uint64_t* word) const noexcept;
  bool base_find(const leaf* l, ukey k, uint64_t* word) const noexcept;  // l: the leaf leaf_for(k) names
  // Of the key's bytes, the same in every build (the stripe of a key must
  // not change between the process that logged it and the one replaying).
  static uint64_t hash(ukey k) noexcept;
  static unsigned stripe_of(uint64_t h) noexcept { return unsigned(h >> 60) % k_stripes; }
  // Newest state of k (hash h): 1 present (word set), 0 absent (removed or
  // never); *upsert_in_active: the active buffer holds an upsert of k. Takes
  // the active buffer's lock (shared) if its filter names k.
  // likely_absent (an insert): the base filter is asked before the base.
  bool find(ukey k, uint64_t h, uint64_t* word, bool* upsert_in_active = nullptr, bool likely_absent = false);
  bool write(ukey k, uint64_t word, wop o, uint64_t* old);
  bool write_once(ukey k, uint64_t word, wop o, uint64_t* old);
  // A write found no log room (see write()); false: nothing to wait for.
  bool make_room(uint64_t g, bool force);
  void wait_merge(uint64_t g);  // until a merge after version g ends (its frees done) or none runs
  bool merge_frees(const buffer& b) const;
  int update_in_base(buffer& a, ukey k, uint64_t h, uint64_t word);
  // Appends one record to b's log (the room was made by grow_log); fence:
  // false for a carry, which fences once for all its records.
  void append(buffer& b, unsigned s, ukey k, uint64_t word, bool tomb, bool fence = true);
  // Links chunks at the end of log li of stripe s until it holds `need`
  // records (durably, before any record goes there); may_borrow: a remove
  // (or a carry) may take the remove reserve. Throws pool_full. Stripe s's
  // lock held.
  void grow_log(unsigned s, unsigned li, uint64_t need, bool may_borrow);
  // The entry of a write (or a replayed or carried record): the map's lock
  // taken exclusively here.
  void apply(buffer& b, unsigned s, ukey k, uint64_t h, uint64_t word, bool tomb);
  uint64_t threshold() const noexcept;
  bool due(const buffer& b) const noexcept {
    return b.entries.load(std::memory_order_relaxed) >= threshold() + b.carried.load(std::memory_order_relaxed);
  }
  int64_t live() const noexcept;  // records: at the open, plus what every stripe's writes added
  // Every stripe's lock, in order (carry, trim_log).
  std::vector<std::unique_lock<std::mutex>> lock_stripes();
  void maybe_freeze();
  void throttle();
  void freeze_locked();
  bool put_bytes(std::string_view k, std::string_view v, wop o);
  void resume() {
    if (resume_.load(std::memory_order_relaxed)) [[unlikely]]
      kick();
  }

  // --- recovery (tree.cpp)
  void recover_leaves(bool dirty);
  size_t replay(buffer& b, uint64_t tag);
  void measure_log(unsigned s, unsigned li);
  void rebuild_layer();
  static uint64_t checksum(const log_rec& r) noexcept;
  uint64_t block_hash(uint64_t off) const noexcept;  // keys=bytes: of the kv block's bytes
  bool block_ok(const log_rec& r) const noexcept;

  // --- merge (merge.cpp)
  void kick();  // starts the merge thread if needed and wakes it
  void merge_thread();
  bool merge(buffer& f);  // false: abandoned (nothing committed)
  // carry non-null: the leaf gets no new record (no new leaf): only the
  // removes apply, the rest is appended to *carry.
  plan plan_leaf(size_t li, const items_t& items, size_t& i, std::vector<uint64_t>& free_after,
                 int64_t& delta, items_t* carry);
  void carry(const items_t& rest);
  void trim_log(unsigned li);
  void write_leaf(out_leaf& o, uint64_t next, uint64_t g, std::vector<std::pair<const void*, size_t>>& lines);
  // Asks for the lines a merge reads of leaf li (its header and metadata,
  // or with `with_slots` its slot block: the header's line is read for its
  // address, so that is asked for a step later than the header).
  void prefetch_leaf(size_t li, bool with_slots) const noexcept;
  void stop_thread(bool drain);
  void wait_idle();
  void merge_all();  // close(): every buffer merged, in this thread

  // --- scans (scan.cpp)
  template <class Emit>
  void collect(ukey from, size_t count, const ukey* hi, Emit&& emit);

  // --- verification (verify.cpp)
  std::string check_chain(uint64_t& records, std::vector<uint64_t>& chain) const;

  [[noreturn]] void corrupt(const std::string& what) const { throw error(errc::corrupt, "dptree: " + what); }
  bool leaf_in_heap(uint64_t off) const noexcept { return p_.valid_block(off, sizeof(leaf)); }
  log_chunk* chunk_at(uint64_t off) const noexcept { return p_.template ptr<log_chunk>(off); }

  pm::pool& p_;
  root_block* root_ = nullptr;
  unsigned cap_ = k_slots;        // param `leaf`
  unsigned nslots_ = k_slots;     // slots per leaf: min(256, 2 * leaf)
  uint64_t merge_min_ = 1024;     // param `merge_min`
  uint64_t merge_permille_ = 70;  // param `merge_permille`
  uint64_t fail_leaves_ = 0;      // param `fail_leaves` (tests): every n-th merge leaf refused
  std::atomic<uint64_t> leaf_asks_{0};
  bool refused_ = false;  // the merge thread's last leaf was refused by fail_leaves
  common::mutant_switch<mutant> mut_;

  std::unique_ptr<stripe[]> stripes_{new stripe[k_stripes]};

  // The structure lock: every operation passes it (a line of its own per
  // thread); the freeze, the commit and check() close it.
  common::writer_gate gate_;
  std::atomic<uint64_t> gen_{0};
  std::unique_ptr<detail::inner_layer<K>> layer_;
  std::vector<uint64_t> leaves_;  // the chain at the current version
  uint64_t base_records_ = 0;
  buffer bufs_[2];
  buffer* active_ = &bufs_[0];
  buffer* frozen_ = nullptr;
  int64_t live0_ = 0;  // records at the open

  std::mutex mmu_;
  std::condition_variable mcv_, idle_cv_;
  bool want_ = false, merging_ = false, stop_ = false, drain_ = true;
  // The version of the last merge the thread ended (its frees done): a
  // writer waiting for room waits for this, not the commit (gen_).
  uint64_t ended_gen_ = 0;
  std::atomic<bool> abort_{false}, resume_{false};
  std::atomic<bool> base_full_{false};  // the last merge carried records: new upserts are refused
  std::thread bg_;
  std::atomic<uint64_t> merges_{0}, merged_records_{0}, merge_failures_{0}, merge_lines_{0}, merge_fences_{0};
  std::atomic<uint64_t> partial_merges_{0}, carried_{0};
  std::atomic<uint64_t> in_place_{0};  // updates stored in their base slot (update_in_base)
  // The leaves the running merge copies records out of (a split, a leaf
  // that leaves the chain), each added while the merge plans it, under
  // move_mu_: an update in place during a merge stores under move_mu_ into
  // a leaf not listed (the plan reads its values after), else takes the
  // buffer. Cleared when a merge starts and at its commit.
  std::mutex move_mu_;
  std::unordered_set<uint64_t> moving_;
  uint64_t replayed_ = 0;
  std::unordered_set<uint64_t> recarried_;  // keys=bytes: blocks replay found carried (carry())
  double rebuild_seconds_ = 0, merge_seconds_ = 0;
  // The base filter (see "BASE FILTER"): null until the first merge after
  // an open; replaced under the closed gate, read inside it.
  std::unique_ptr<bloom> base_filter_;
  // Sized at 10 bits per record when built (a power of two: 10-20), built
  // again when the base reaches 6 bits per record (~8% false positives).
  static constexpr uint64_t k_base_filter_bits = 10, k_base_filter_min_bits = 6;
  uint64_t base_filter_cap_ = 0;  // base records it keeps its false positives low for
  std::atomic<uint64_t> base_filter_builds_{0};
  std::vector<mrec> merge_scratch_;  // plan_leaf's merged records (merge thread, or close() after it stopped)
};

}  // namespace pmindex::hybrid::dptree

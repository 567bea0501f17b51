// A pool: one file (or anonymous memory in `dram` mode) mapped whole, holding
// a header, the allocator's saved state and the heap of an index. Indexes ask
// the pool for memory (alloc/retire) and persist through it (flush/fence), and
// never touch the OS or a flush instruction themselves, so the crash checker
// sees every persistence event.
//
// Threads: each thread that uses a pool gets a per-thread state (allocator
// cache, epoch slot) on first use, found through a thread-local table; no
// operation allocates it. A thread's state goes back to the pool when the
// thread exits or the pool closes.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "pmindex/alloc/heap.hpp"
#include "pmindex/error.hpp"
#include "pmindex/pm/counters.hpp"
#include "pmindex/pm/detail/header.hpp"
#include "pmindex/pm/mode.hpp"
#include "pmindex/pm/observer.hpp"
#include "pmindex/sync/epoch.hpp"

namespace pmindex::pm {

class tx_logs;

// Built with -DPMINDEX_CRASH_SIM=OFF the observer branch disappears (to
// measure that it costs nothing); crash simulation is then unavailable.
#ifdef PMINDEX_NO_CRASH_SIM
inline constexpr bool k_crash_sim = false;
#else
inline constexpr bool k_crash_sim = true;
#endif

enum class open_mode : uint8_t { create_if_missing, must_create, must_exist };

struct pool_options {
  std::string path = "/dev/shm/pmindex.pool";
  uint64_t size = uint64_t{1} << 30;  // used when creating
  // Empty: an existing pool opens in the mode stored in its header (the
  // one it was created in), a new one in persist. Given: `dram` never
  // touches a file; for an existing pool, persist, eadr and volatile may be
  // switched (mode_note() says so), while tx and the others never mix
  // (errc::wrong_mode), and a pool left dirty by a volatile open is refused
  // (errc::corrupt: its contents are not crash-consistent).
  std::optional<mode> pm_mode;
  flush_kind flush = flush_kind::automatic;
  uint32_t write_ns = 0;  // emulated media write latency per flushed line
  open_mode open = open_mode::create_if_missing;
  std::string index_name;    // written at creation, checked by the caller
  std::string index_params;  // written at creation
  // The modes the index supports (empty: any): an existing pool stored in
  // another mode is refused (errc::unsupported) before it is marked in use.
  std::vector<mode> allowed_modes;
  // Crash simulation: anonymous memory like `dram`, persistence semantics like
  // `persist`, and every flush/fence reported to the observer first.
  persist_observer* observer = nullptr;
  // Open an existing image in memory instead of a file (crash-image recovery):
  // the pool adopts [image, image + image_size), which must stay mapped.
  char* image = nullptr;
  uint64_t image_size = 0;
  bool quiet = false;  // no warnings on stderr
  // Look only (pmindex info): the header is not marked in use; abandon() after.
  bool inspect = false;
  // A pool created in tx mode: its undo logs (pm/tx.hpp), one per
  // transaction in progress at once, of tx_log_size bytes each.
  uint32_t tx_logs = 8;
  uint64_t tx_log_size = 64 << 10;
};

class pool {
 public:
  // Creates or opens a pool; throws pmindex::error with a one-line message.
  static std::unique_ptr<pool> open(const pool_options& o);
  ~pool();  // close(): a clean shutdown
  pool(const pool&) = delete;
  pool& operator=(const pool&) = delete;

  // Clean close: drains caches and epochs, saves the allocator state, marks
  // the pool clean. All threads must be done with the pool.
  void close();
  // Unmaps without a clean shutdown (what a crash leaves; tests, checker).
  void abandon();

  // --- addressing: the pool stores offsets, never pointers
  char* base() const noexcept { return base_; }
  uint64_t size() const noexcept { return size_; }
  template <class T = void>
  T* ptr(uint64_t off) const noexcept { return reinterpret_cast<T*>(base_ + off); }
  uint64_t off(const void* p) const noexcept {
    return static_cast<uint64_t>(static_cast<const char*>(p) - base_);
  }
  bool contains(const void* p) const noexcept {
    auto c = static_cast<const char*>(p);
    return c >= base_ && c < base_ + size_;
  }
  // True if [off, off + n) lies inside the heap and off is 16-byte aligned
  // (every block is): the check before following an offset read from the
  // pool, so a damaged pool is an error, never a wild access.
  bool valid_block(uint64_t off, uint64_t n) const noexcept {
    return off >= heap_begin_ && off % 16 == 0 && off <= size_ && n <= size_ - off;
  }

  // --- persistence primitives
  // Writes back the cache lines of [p, p + n) (no ordering by itself).
  void flush(const void* p, size_t n) const noexcept {
    if (k_crash_sim && observer_) [[unlikely]] observer_->on_flush(p, n);
    if (flush_ == flush_kind::none) return;
    auto a = reinterpret_cast<uintptr_t>(p) & ~uintptr_t{63};
    auto e = reinterpret_cast<uintptr_t>(p) + n;
    uint64_t lines = 0;
    switch (flush_) {
      case flush_kind::clwb:
        for (; a < e; a += 64, ++lines) asm volatile("clwb (%0)" ::"r"(a) : "memory");
        break;
      case flush_kind::clflushopt:
        for (; a < e; a += 64, ++lines) asm volatile("clflushopt (%0)" ::"r"(a) : "memory");
        break;
      default:
        for (; a < e; a += 64, ++lines) asm volatile("clflush (%0)" ::"r"(a) : "memory");
        break;
    }
    t_counters.lines_flushed += lines;
    if (write_ns_) t_unfenced_lines += lines;
  }
  // Orders earlier flushes before later stores (sfence).
  void fence() const noexcept {
    if (k_crash_sim && observer_) [[unlikely]] observer_->on_fence();
    if (!fence_) return;
    asm volatile("sfence" ::: "memory");
    ++t_counters.fences;
    if (write_ns_ && t_unfenced_lines) emulate_write_latency();
  }
  void persist(const void* p, size_t n) const noexcept {
    flush(p, n);
    fence();
  }
  // An 8-byte failure-atomic store followed by persist.
  void store_persist(uint64_t* word, uint64_t v) const noexcept {
    __atomic_store_n(word, v, __ATOMIC_RELEASE);
    persist(word, 8);
  }

  // --- allocation (offsets; 0 means the pool is full)
  uint64_t alloc(size_t n) {
    auto& l = local();
    uint64_t off = heap_->alloc(l.cache, n);
    if (off) [[likely]] {
      ++t_counters.allocs;
      t_counters.bytes_allocated += n;
    }
    return off;
  }
  // Like alloc but throws error(pool_full).
  uint64_t alloc_or_throw(size_t n);
  // Immediate free: only for blocks no other thread can reach.
  void free(uint64_t off) {
    ++t_counters.frees;
    heap_->free(local().cache, off);
  }
  // Deferred free: the block is reused only after every thread that could
  // hold a reference has left its epoch. The unlink must already be durable.
  void retire(uint64_t off) {
    auto& l = local();
    // While blocks are lent from the remove reserve, the blocks that pay
    // them back may sit here: any thread's collect() may reclaim them, so
    // a remover waiting for the reserve never waits for an idle thread.
    if (heap_->reserve_owed()) [[unlikely]] return epochs_->retire_shared(l.slot, off);
    epochs_->retire(l.slot, off);
  }

  // --- the remove reserve (alloc::heap::set_reserve): what lets an index
  // whose removes copy (copy-on-write) remove from a full pool. Its blocks
  // are DRAM-side bookkeeping over free space: no persistence protocol
  // changes, and recovery retakes them after tracing.
  // Keeps `count` blocks of n bytes' size class back from alloc().
  void keep_for_removes(size_t n, uint32_t count) { heap_->set_reserve(n, count); }
  // For an operation that frees space: alloc(n), else a block of the
  // reserve, which the next free of its class pays back (take a block of
  // the class of the block the operation will retire). 0 if none is left.
  uint64_t alloc_for_remove(size_t n);
  // Call unpinned after alloc_for_remove returned 0 on this thread:
  // reclaims what it may (retired blocks pay the reserve back) and returns
  // whether a retry may find a block (blocks of that class are lent, so
  // they will come back); false: the pool is full and that reserve was
  // never filled (a pool filled before it had one).
  bool wait_for_reserve();
  size_t block_size(uint64_t off) const { return heap_->block_size(off); }
  bool is_allocated(uint64_t off) const { return heap_->is_allocated(off); }

  // The calling thread's slot, 0 .. sync::epoch_manager::k_max_slots - 1:
  // held by one thread at a time, reused after that thread exits. An index
  // may key per-thread persistent state by it (PACTree's SMO logs).
  uint32_t thread_slot() { return local().slot; }

  // --- epochs
  sync::epoch_guard pin() { return sync::epoch_guard(*epochs_, local().slot); }
  sync::epoch_manager& epochs() noexcept { return *epochs_; }
  // Tries to advance the epoch and reclaims the calling thread's expired
  // retired blocks (an index may call it, unpinned, before failing an
  // operation for lack of space).
  void collect() { epochs_->collect(local().slot); }
  // Call unpinned after an allocation failed, before failing the operation
  // with pool_full: reclaims the blocks this thread retired and gives its
  // cached blocks back to the heap. A thread pinned in an older epoch (one
  // descheduled mid-operation) holds back every block retired since: a
  // writer running alone on a core fills the pool with them in one time
  // slice. So this waits for the grace period, sleeping so that the pinned
  // thread runs, up to k_full_wait. Returns whether every block this thread
  // retired came back (a retry sees all the space it can get).
  bool reclaim_before_full();
  static constexpr std::chrono::milliseconds k_full_wait{200};
  // Reclaims all retired blocks now; no thread may be pinned.
  void quiesce() { epochs_->drain_all(); }
  // Returns the calling thread's cached free blocks to the shared heap (a
  // thread exit does it too), so that chunks whose blocks are all free can
  // serve other size classes: for a long-lived thread that frees more than
  // it allocates (a background thread), or one that met a full pool.
  void release_cache() { heap_->drain(local().cache); }

  // --- header
  uint64_t root() const noexcept { return __atomic_load_n(&hdr_->root, __ATOMIC_ACQUIRE); }
  void set_root(uint64_t off) noexcept { store_persist(&hdr_->root, off); }
  std::string index_name() const { return hdr_->index_name; }
  std::string index_params() const { return hdr_->index_params; }
  const detail::pool_header& header() const noexcept { return *hdr_; }

  // --- state of this open
  mode pm_mode() const noexcept { return mode_; }
  // The mode the pool was created in (its header's), and a one-line note
  // when this open uses another one (empty otherwise).
  mode stored_mode() const noexcept { return static_cast<mode>(hdr_->create_mode); }
  const std::string& mode_note() const noexcept { return mode_note_; }
  flush_kind flush_instruction() const noexcept { return flush_; }
  bool created() const noexcept { return created_; }
  bool was_clean() const noexcept { return was_clean_; }  // at open
  bool is_pmem() const noexcept { return is_pmem_; }     // DAX with MAP_SYNC
  double open_seconds() const noexcept { return open_seconds_; }
  const std::string& path() const noexcept { return path_; }

  // Tracing recovery after a dirty open: `trace` reports every reachable
  // block through the sink; everything else becomes free.
  class trace_sink {
   public:
    explicit trace_sink(alloc::heap& h, bool count_only = false) : h_(h), count_only_(count_only) {}
    void add(uint64_t off, size_t n) {
      if (count_only_) {
        if (!h_.is_allocated(off)) throw error(errc::corrupt, "a reachable block is free");
      } else {
        h_.rebuild_mark(off, n);
      }
      ++blocks_;
    }
    uint64_t blocks() const noexcept { return blocks_; }

   private:
    alloc::heap& h_;
    bool count_only_;
    uint64_t blocks_ = 0;
  };
  template <class F>
  uint64_t rebuild_heap(F&& trace) {
    heap_->rebuild_begin();
    trace_sink sink(*heap_);
    trace(sink);
    heap_->rebuild_end();
    return sink.blocks();
  }
  // The same walk over a rebuilt heap, changing nothing: how many blocks are
  // reachable (each must be allocated). After a recovery step that
  // allocated or freed (index::after_recovery).
  template <class F>
  uint64_t count_reachable(F&& trace) {
    trace_sink sink(*heap_, true);
    trace(sink);
    return sink.blocks();
  }

  // Bytes in use by blocks (excluding per-thread caches), chunks reserved.
  alloc::heap_usage usage() const;

  // The undo logs of a pool open in tx mode (pm/tx.hpp), else null.
  tx_logs* tx_state() const noexcept { return tx_.get(); }
  uint64_t heap_begin() const noexcept { return heap_begin_; }

 private:
  struct local_state {
    alloc::thread_cache cache;
    uint32_t slot = 0;
  };
  pool();  // out of line: tx_logs is incomplete here
  local_state& local() {
    // The first k_inline_pools ids: a plain TLS load (the fast path); the
    // rest (a process with very many open pools) look in a TLS vector.
    if (id_ < k_inline_pools) [[likely]] {
      auto& t = t_tls;
      if (t.gen[id_] == gen_) [[likely]] return *t.state[id_];
    }
    return local_slow();
  }
  local_state& local_slow();
  local_state& register_thread();
  void release_thread(local_state* s);
  void emulate_write_latency() const noexcept;
  void map_file(const pool_options& o);
  void format(const pool_options& o);
  void validate(uint64_t mapped_len);
  void set_mode(mode m, bool crash_sim);
  mode reopen_mode(const pool_options& o);
  void sync_to_media(const void* p, uint64_t n);
  void attach_heap();
  void unmap();
  static void reclaim(void* ctx, uint64_t off);

  // Pools open at once are limited only by memory: ids are reused after a
  // close, and ids past k_inline_pools live in a per-thread vector.
  static constexpr unsigned k_inline_pools = 64;
  // Trivial, so the fast-path access is a plain TLS load; the thread-exit
  // cleanup lives in a separate thread_local touched only at registration.
  struct tls_table {
    uint64_t gen[k_inline_pools];
    local_state* state[k_inline_pools];
  };
  static inline constinit thread_local tls_table t_tls{};
  friend struct tls_cleanup;
  static inline constinit thread_local uint64_t t_unfenced_lines = 0;
  static inline constinit thread_local size_t t_reserve_wanted = 0;  // alloc_for_remove's last miss
  friend struct pool_registry;

  char* base_ = nullptr;
  uint64_t size_ = 0;
  uint64_t map_len_ = 0;  // bytes mapped (owned mappings)
  uint64_t heap_begin_ = UINT64_MAX;  // first heap byte (set once the header is validated)
  detail::pool_header* hdr_ = nullptr;
  int fd_ = -1;
  bool anonymous_ = false;
  bool owns_mapping_ = true;
  bool closed_ = false;
  // Set under the registry lock when close() starts: a thread exiting from
  // then on leaves its per-pool state to close(), which drains them all.
  bool closing_ = false;
  mode mode_ = mode::persist;
  std::string mode_note_;
  flush_kind cpu_flush_ = flush_kind::clflush;  // the instruction, whatever the mode
  bool warn_no_dax_ = false;                    // a file outside DAX and tmpfs (warned in persist and eadr)
  flush_kind flush_ = flush_kind::none;
  bool fence_ = false;
  uint32_t write_ns_ = 0;
  persist_observer* observer_ = nullptr;
  bool created_ = false, was_clean_ = false, is_pmem_ = false;
  double open_seconds_ = 0;
  std::string path_;
  unsigned id_ = 0;
  uint64_t gen_ = 0;
  std::unique_ptr<alloc::heap> heap_;
  std::unique_ptr<sync::epoch_manager> epochs_;
  std::mutex locals_mu_;
  std::vector<std::unique_ptr<local_state>> locals_;  // owned, reused
  std::vector<local_state*> free_locals_;
  std::unique_ptr<tx_logs> tx_;
};

}  // namespace pmindex::pm

#include "pmindex/pm/pool.hpp"

#include <fcntl.h>
#include <linux/magic.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/sysmacros.h>
#include <unistd.h>
#include <x86intrin.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <algorithm>
#include <cstring>
#include <ctime>
#include <fstream>
#include <thread>

#include "pm/tx_log.hpp"
#include "pmindex/error.hpp"
#include "pmindex/pm/tx.hpp"

#ifndef MAP_SHARED_VALIDATE
#define MAP_SHARED_VALIDATE 0x03
#endif
#ifndef MAP_SYNC
#define MAP_SYNC 0x80000
#endif

namespace pmindex::pm {

using namespace detail;

// Which pool holds which id; guards thread registration against close.
struct pool_registry {
  static std::mutex& mu() {
    static std::mutex m;
    return m;
  }
  static std::vector<pool*>& slots() {  // by id; nullptr = free
    static std::vector<pool*> s;
    return s;
  }
  static inline uint64_t next_gen = 1;
};

namespace {

[[noreturn]] void fail(errc c, const std::string& msg) { throw error(c, msg); }
std::string sys_err() { return std::strerror(errno); }
uint64_t round_up(uint64_t v, uint64_t a) { return (v + a - 1) / a * a; }

uint64_t devdax_size(const struct stat& st) {
  char p[128];
  std::snprintf(p, sizeof p, "/sys/dev/char/%u:%u/size", major(st.st_rdev), minor(st.st_rdev));
  std::ifstream f(p);
  uint64_t n = 0;
  f >> n;
  return n;
}

double tsc_per_ns() {
  static const double v = [] {
    auto t0 = std::chrono::steady_clock::now();
    uint64_t c0 = __rdtsc();
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    uint64_t c1 = __rdtsc();
    auto t1 = std::chrono::steady_clock::now();
    double ns = std::chrono::duration<double, std::nano>(t1 - t0).count();
    return (c1 - c0) / ns;
  }();
  return v;
}

}  // namespace

std::unique_ptr<pool> pool::open(const pool_options& o) {
  auto t0 = std::chrono::steady_clock::now();
  std::unique_ptr<pool> p(new pool());
  p->path_ = o.path;
  p->observer_ = o.observer;
  p->write_ns_ = o.write_ns;

  flush_kind fk = o.flush == flush_kind::automatic ? best_flush() : o.flush;
  if (!cpu_supports(fk))
    fail(errc::unsupported, "this CPU has no " + std::string(to_string(fk)) + " instruction");
  p->cpu_flush_ = fk == flush_kind::none ? best_flush() : fk;
  // The mode of a new pool; an existing one's is settled once its header
  // has been read (reopen_mode).
  p->set_mode(o.pm_mode.value_or(mode::persist), o.observer != nullptr);
  if (o.write_ns) tsc_per_ns();

  if (o.image) {
    p->base_ = o.image;
    p->size_ = o.image_size;
    p->owns_mapping_ = false;
    p->path_ = "<image>";
    p->hdr_ = reinterpret_cast<pool_header*>(p->base_);
    p->validate(o.image_size);
  } else if (o.pm_mode == mode::dram || o.observer) {
    if (o.size < k_min_pool_size)
      fail(errc::too_small, "pool size " + std::to_string(o.size) + " is below the minimum of 1 MiB");
    void* m = mmap(nullptr, o.size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (m == MAP_FAILED) fail(errc::io, "cannot map " + std::to_string(o.size) + " bytes: " + sys_err());
    p->base_ = static_cast<char*>(m);
    p->size_ = o.size;
    p->map_len_ = o.size;
    p->anonymous_ = true;
    p->hdr_ = reinterpret_cast<pool_header*>(p->base_);
    p->path_ = o.observer ? "<crash-sim>" : "<dram>";
    if (o.observer) o.observer->on_map(p->base_, o.size);
    p->format(o);
  } else {
    p->map_file(o);
  }

  auto& h = *p->hdr_;
  // Checked here, before the pool is marked in use, so that opening a pool
  // with the wrong index or mode leaves it exactly as it was (clean stays
  // clean).
  if (!p->created_ && !o.inspect && !o.index_name.empty() && o.index_name != h.index_name)
    fail(errc::wrong_index, p->path_ + " holds index '" + std::string(h.index_name) + "', not '" +
                                o.index_name + "'");
  if (!p->created_)
    p->set_mode(o.inspect ? o.pm_mode.value_or(p->stored_mode()) : p->reopen_mode(o), o.observer != nullptr);
  if (p->warn_no_dax_ && !o.quiet && (p->mode_ == mode::persist || p->mode_ == mode::eadr))
    std::fprintf(stderr,
                 "pmindex: warning: %s is not on a DAX file system (no MAP_SYNC); "
                 "its flushes reach the page cache, not the media\n",
                 o.path.c_str());
  p->was_clean_ = !p->created_ && h.clean == 1;
  p->heap_ = std::make_unique<alloc::heap>(p->base_, h.heap_offset, h.nchunks);
  p->heap_begin_ = h.heap_offset;
  if (p->was_clean_) p->heap_->load(p->base_ + h.meta_offset);
  p->epochs_ = std::make_unique<sync::epoch_manager>(&pool::reclaim, p.get());

  {
    std::lock_guard lk(pool_registry::mu());
    auto& slots = pool_registry::slots();
    unsigned id = 0;
    while (id < slots.size() && slots[id]) ++id;
    if (id == slots.size()) slots.push_back(nullptr);
    slots[id] = p.get();
    p->id_ = id;
    p->gen_ = pool_registry::next_gen++;
  }

  // In use from now on: a crash before the next clean close means recovery.
  // The mode goes first: a line holds a prefix of its stores, so a durable
  // clean = 0 comes with the mode that dirtied the pool.
  if (!o.inspect) {
    h.last_mode = static_cast<uint64_t>(p->mode_);
    h.clean = 0;
    h.open_count += 1;
    p->persist(&h.root, 64);
    // A volatile open never flushes, so this mark alone is made durable,
    // before any store of the open: its refusal after a crash relies on it.
    if (p->mode_ == mode::volatile_) p->sync_to_media(&h.root, 64);
  }
  if (p->mode_ == mode::tx && h.tx_log_count) {
    p->tx_ = std::make_unique<tx_logs>();
    for (uint64_t i = 0; i < h.tx_log_count; ++i) {
      auto l = std::make_unique<tx_log_state>();
      l->log_off = h.tx_log_offset + i * h.tx_log_size;
      l->size = h.tx_log_size;
      p->tx_->logs.push_back(std::move(l));
    }
    // Before the index sees the pool: every incomplete transaction undone.
    if (!p->created_ && !p->was_clean_ && !o.inspect) tx_recover(*p);
    for (auto& l : p->tx_->logs) l->gen = p->ptr<tx_log_head>(l->log_off)->done_gen + 1;
  }
  p->open_seconds_ = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return p;
}

void pool::set_mode(mode m, bool crash_sim) {
  mode_ = m;
  // Crash simulation observes persist semantics whatever the mode.
  bool flushes = m == mode::persist || m == mode::tx || crash_sim;
  flush_ = flushes ? cpu_flush_ : flush_kind::none;
  fence_ = flushes || m == mode::eadr;
}

// The mode an existing pool opens in (validated header): its creation mode
// unless another is asked for. persist, eadr and volatile share one layout
// and protocol, so they may be switched (noted in the open report); a tx
// pool's changes are undo-logged and only a tx open reads the log, so tx and
// the others never mix. A pool whose last open was volatile and that was not
// closed cleanly holds whatever lines happened to reach the media: refused.
mode pool::reopen_mode(const pool_options& o) {
  const auto& h = *hdr_;
  const mode stored = stored_mode(), last = static_cast<mode>(h.last_mode);
  const mode m = o.pm_mode.value_or(stored);
  auto name = [](mode x) { return std::string(to_string(x)); };
  if ((m == mode::tx) != (stored == mode::tx))
    fail(errc::wrong_mode, path_ + " was created in " + name(stored) + " mode and cannot be opened in " +
                               name(m) +
                               " mode (tx pools open only in tx mode, other pools never in tx mode)");
  if (h.clean != 1 && last == mode::volatile_)
    fail(errc::corrupt, path_ +
                            " was in use in volatile mode and not closed cleanly: its contents are not "
                            "crash-consistent (recreate the pool)");
  if (!o.allowed_modes.empty() &&
      std::find(o.allowed_modes.begin(), o.allowed_modes.end(), m) == o.allowed_modes.end())
    fail(errc::unsupported, path_ + " holds index '" + std::string(h.index_name) + "' in " + name(m) +
                                " mode, which that index does not support");
  if (m != stored) mode_note_ = "pool created in " + name(stored) + " mode, opened in " + name(m) + " mode";
  return m;
}

// Makes [p, p + n) reach the media whatever the mode (flush_ may be none):
// the CPU's flush instruction on DAX, msync for a file in the page cache.
void pool::sync_to_media(const void* p, uint64_t n) {
  if (anonymous_ || !owns_mapping_) return;
  if (is_pmem_) {
    auto a = reinterpret_cast<uintptr_t>(p) & ~uintptr_t{63};
    auto e = reinterpret_cast<uintptr_t>(p) + n;
    for (; a < e; a += 64) {
      if (cpu_flush_ == flush_kind::clwb)
        asm volatile("clwb (%0)" ::"r"(a) : "memory");
      else if (cpu_flush_ == flush_kind::clflushopt)
        asm volatile("clflushopt (%0)" ::"r"(a) : "memory");
      else
        asm volatile("clflush (%0)" ::"r"(a) : "memory");
    }
    asm volatile("sfence" ::: "memory");
    return;
  }
  auto first = reinterpret_cast<uintptr_t>(p) & ~uintptr_t{4095};
  auto end = reinterpret_cast<uintptr_t>(p) + n;
  if (msync(reinterpret_cast<void*>(first), end - first, MS_SYNC) != 0)
    fail(errc::io, "cannot write " + path_ + " back: " + sys_err());
}

void pool::map_file(const pool_options& o) {
  struct stat st;
  bool exists = ::stat(o.path.c_str(), &st) == 0;
  if (!exists && errno != ENOENT) fail(errc::io, "cannot stat " + o.path + ": " + sys_err());
  if (!exists && o.open == open_mode::must_exist) fail(errc::missing_file, "pool not found: " + o.path);
  if (exists && o.open == open_mode::must_create)
    fail(errc::io, "pool already exists: " + o.path + " (remove it first)");
  bool devdax = exists && S_ISCHR(st.st_mode);
  if (exists && !devdax && !S_ISREG(st.st_mode)) fail(errc::not_a_pool, o.path + " is not a regular file");

  // A new pool is built under a temporary name and linked to its path only
  // once formatted, so a crash during creation leaves no pool at all rather
  // than a file at the path that every later open rejects as "not a pool".
  // (link, unlike rename, fails if another process created the path first.)
  struct temp_name {
    std::string path;
    ~temp_name() {
      if (!path.empty()) ::unlink(path.c_str());
    }
  } temp;
  if (!exists) {
    temp.path = o.path + ".creating." + std::to_string(::getpid());
    ::unlink(temp.path.c_str());  // left by a crashed process with our pid
  }
  const std::string& open_path = exists ? o.path : temp.path;
  fd_ = ::open(open_path.c_str(), O_RDWR | (exists ? 0 : O_CREAT | O_EXCL), 0644);
  if (fd_ < 0) {
    // A new pool's error names the path asked for, not its temporary name.
    std::string msg = (exists ? "cannot open " : "cannot create ") + o.path + ": " + sys_err();
    temp.path.clear();  // not ours
    fail(errc::io, msg);
  }
  if (flock(fd_, LOCK_EX | LOCK_NB) != 0) {
    ::close(fd_);
    fd_ = -1;
    fail(errc::io, "pool " + o.path + " is in use by another process");
  }

  uint64_t len = exists ? (devdax ? devdax_size(st) : static_cast<uint64_t>(st.st_size)) : o.size;
  if (!exists) {
    if (o.size < k_min_pool_size) {
      fail(errc::too_small, "pool size " + std::to_string(o.size) + " is below the minimum of 1 MiB");
    }
    int rc = posix_fallocate(fd_, 0, static_cast<off_t>(o.size));
    if (rc != 0) {
      fail(errc::io, "cannot allocate " + std::to_string(o.size) + " bytes for " + o.path + ": " +
                         std::strerror(rc));
    }
  } else if (len < k_header_size && !devdax) {
    fail(errc::not_a_pool, o.path + " is not a pmindex pool (only " + std::to_string(len) + " bytes)");
  }

  void* m = mmap(nullptr, len, PROT_READ | PROT_WRITE, MAP_SHARED_VALIDATE | MAP_SYNC, fd_, 0);
  is_pmem_ = m != MAP_FAILED;
  if (m == MAP_FAILED) m = mmap(nullptr, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd_, 0);
  if (m == MAP_FAILED) {
    fail(errc::io, "cannot map " + o.path + ": " + sys_err());
  }
  base_ = static_cast<char*>(m);
  size_ = len;
  map_len_ = len;
  hdr_ = reinterpret_cast<pool_header*>(base_);

  struct statfs sfs;
  bool tmpfs = fstatfs(fd_, &sfs) == 0 && sfs.f_type == TMPFS_MAGIC;
  warn_no_dax_ = !is_pmem_ && !devdax && !tmpfs;  // printed once the mode is known
  if (devdax) is_pmem_ = true;

  bool fresh_devdax = devdax && std::memcmp(hdr_->magic, k_magic, 8) != 0 &&
                      o.open != open_mode::must_exist;
  if (!exists || fresh_devdax) {
    created_ = true;
    format(o);
    if (!exists && ::link(temp.path.c_str(), o.path.c_str()) != 0)
      fail(errc::io, errno == EEXIST ? "pool already exists: " + o.path + " (created concurrently)"
                                     : "cannot create " + o.path + ": " + sys_err());
  } else {
    validate(len);
  }
}

void pool::format(const pool_options& o) {
  created_ = true;
  const uint64_t size = size_;
  uint64_t per_chunk_meta = 4 + k_bitmap_bytes;
  uint64_t n0 = (size - k_header_size) / (k_chunk_size + per_chunk_meta);
  uint64_t meta_size = round_up(n0 * per_chunk_meta, 4096);
  // A tx pool's undo logs sit between the allocator state and the heap.
  uint64_t tx_off = 0, tx_count = 0, tx_size = 0;
  if (mode_ == mode::tx) {
    if (o.tx_logs < 1 || o.tx_logs > 4096 || o.tx_log_size < 256 || o.tx_log_size > (uint64_t{1} << 30) ||
        o.tx_log_size % 64)
      fail(errc::usage, "tx logs: 1..4096 logs of 256 B..1 GiB, a multiple of 64 (got " +
                            std::to_string(o.tx_logs) + " of " + std::to_string(o.tx_log_size) + ")");
    tx_off = round_up(k_header_size + meta_size, 64);
    tx_count = o.tx_logs;
    tx_size = o.tx_log_size;
  }
  uint64_t heap_off = round_up(std::max(k_header_size + meta_size, tx_off + tx_count * tx_size), k_chunk_size);
  if (heap_off + k_chunk_size > size)
    fail(errc::too_small, "pool size " + std::to_string(size) + " leaves no room for a heap");
  // The allocator area was sized for n0 chunks; rounding heap_off up can
  // leave room for one chunk more, whose state would not fit (heap::save
  // would then overwrite the first chunk). Never manage more than n0.
  uint64_t nchunks = std::min((size - heap_off) / k_chunk_size, n0);

  auto& h = *hdr_;
  std::memset(&h, 0, sizeof h);
  h.format_version = k_format_version;
  h.header_size = k_header_size;
  h.pool_size = size;
  h.chunk_size = k_chunk_size;
  h.meta_offset = k_header_size;
  h.meta_size = meta_size;
  h.heap_offset = heap_off;
  h.nchunks = nchunks;
  h.create_time = static_cast<uint64_t>(std::time(nullptr));
  h.create_mode = static_cast<uint64_t>(mode_);
  h.last_mode = static_cast<uint64_t>(mode_);
  h.tx_log_offset = tx_off;
  h.tx_log_count = tx_count;
  h.tx_log_size = tx_size;
  // Every log starts empty (a fresh device DAX namespace is not zeroed).
  for (uint64_t i = 0; i < tx_count; ++i) {
    std::memset(base_ + tx_off + i * tx_size, 0, 2 * 64);
    flush(base_ + tx_off + i * tx_size, 2 * 64);
  }
  std::snprintf(h.index_name, sizeof h.index_name, "%s", o.index_name.c_str());
  std::snprintf(h.index_params, sizeof h.index_params, "%s", o.index_params.c_str());
  {
    pool_header sealed = h;
    std::memcpy(sealed.magic, k_magic, 8);
    h.header_sum = header_checksum(sealed);
  }
  persist(&h, sizeof h);
  // The magic goes last: a crash during creation leaves "not a pool".
  std::memcpy(h.magic, k_magic, 8);
  persist(h.magic, 8);
}

void pool::validate(uint64_t len) {
  auto& h = *hdr_;
  if (len < k_header_size || std::memcmp(h.magic, k_magic, 8) != 0)
    fail(errc::not_a_pool, path_ + " is not a pmindex pool (bad magic)");
  if (h.format_version != k_format_version)
    fail(errc::bad_version, path_ + " has pool format version " + std::to_string(h.format_version) +
                                "; this pmindex reads version " + std::to_string(k_format_version) +
                                " (recreate the pool with this version)");
  // The words fixed at creation: one checksum, then each bound without
  // overflow (nothing below may be trusted before it is checked).
  if (header_checksum(h) != h.header_sum) fail(errc::corrupt, path_ + " has a damaged pool header (checksum mismatch)");
  if (h.pool_size > len)
    fail(errc::too_small, path_ + " is truncated: its header says " + std::to_string(h.pool_size) +
                              " bytes, the file has " + std::to_string(len));
  const bool layout_ok =
      h.header_size == k_header_size && h.chunk_size == k_chunk_size && h.pool_size >= k_min_pool_size &&
      h.meta_offset == k_header_size && h.meta_size <= h.pool_size && h.heap_offset <= h.pool_size &&
      h.heap_offset % k_chunk_size == 0 && h.meta_offset + h.meta_size <= h.heap_offset &&
      h.nchunks <= (h.pool_size - h.heap_offset) / k_chunk_size &&
      h.nchunks <= h.meta_size / (4 + k_bitmap_bytes) && h.index_name[sizeof h.index_name - 1] == 0 &&
      h.index_params[sizeof h.index_params - 1] == 0 && h.create_mode <= static_cast<uint64_t>(mode::tx);
  const bool tx = h.create_mode == static_cast<uint64_t>(mode::tx);
  const bool logs_ok =
      tx ? h.tx_log_offset % 64 == 0 && h.tx_log_offset >= h.meta_offset + h.meta_size && h.tx_log_count >= 1 &&
               h.tx_log_count <= 4096 && h.tx_log_size >= 256 && h.tx_log_size <= (uint64_t{1} << 30) &&
               h.tx_log_size % 64 == 0 && h.tx_log_offset <= h.heap_offset &&
               h.tx_log_count * h.tx_log_size <= h.heap_offset - h.tx_log_offset
         : h.tx_log_offset == 0 && h.tx_log_count == 0 && h.tx_log_size == 0;
  if (!layout_ok || !logs_ok) fail(errc::corrupt, path_ + " has an inconsistent pool header");
  // The words that change in use: each 8-byte store is atomic, so they are
  // checked for range, not summed.
  if (h.clean > 1 || h.used_at_close > h.pool_size || h.last_mode > static_cast<uint64_t>(mode::tx) ||
      (h.root && (h.root < h.heap_offset || h.root >= h.pool_size || h.root % 16)))
    fail(errc::corrupt, path_ + " has a damaged pool header (root " + std::to_string(h.root) + ", clean " +
                            std::to_string(h.clean) + ")");
  if (h.clean == 1 && checksum(base_ + h.meta_offset, h.meta_size) != h.meta_sum)
    fail(errc::corrupt, path_ + " has a damaged allocator state (checksum mismatch)");
  size_ = h.pool_size;
}

uint64_t pool::alloc_or_throw(size_t n) {
  uint64_t off = alloc(n);
  if (!off) fail(errc::pool_full, "pool " + path_ + " is full (" + std::to_string(size_) + " bytes)");
  return off;
}

uint64_t pool::alloc_for_remove(size_t n) {
  uint64_t off = alloc(n);
  if (off) return off;
  off = heap_->take_reserved(n);
  if (!off) {
    t_reserve_wanted = n;
    return 0;
  }
  ++t_counters.allocs;
  t_counters.bytes_allocated += n;
  return off;
}

bool pool::wait_for_reserve() {
  // A grace period (two epoch advances) gives back the blocks the
  // borrowers retired (shared: see retire); they pay the reserve back.
  collect();
  if (!heap_->reserve_expected(t_reserve_wanted)) return false;
  std::this_thread::yield();
  return true;
}

bool pool::reclaim_before_full() {
  const uint32_t s = local().slot;
  const auto until = std::chrono::steady_clock::now() + k_full_wait;
  bool all = false;
  for (;;) {
    epochs_->collect(s);  // one advance per call when no thread lags: two reclaim all
    epochs_->collect(s);
    all = epochs_->pending(s) == 0;
    if (all || std::chrono::steady_clock::now() >= until) break;
    std::this_thread::sleep_for(std::chrono::microseconds(100));
  }
  heap_->drain(local().cache);  // whole free chunks may serve the class that was full
  return all;
}

void pool::reclaim(void* ctx, uint64_t off) { static_cast<pool*>(ctx)->free(off); }

namespace {
// Per-thread states of pools with ids >= k_inline_pools: (gen, state) by
// id - k_inline_pools.
thread_local std::vector<std::pair<uint64_t, void*>> t_more;
}  // namespace

// Gives a thread's per-pool state back to every pool still open.
struct tls_cleanup {
  ~tls_cleanup() {
    std::lock_guard lk(pool_registry::mu());
    auto& slots = pool_registry::slots();
    auto& t = pool::t_tls;
    auto give_back = [&](size_t id, uint64_t gen, void* state) {
      if (gen && id < slots.size() && slots[id] && slots[id]->gen_ == gen && !slots[id]->closing_)
        slots[id]->release_thread(static_cast<pool::local_state*>(state));
    };
    for (unsigned id = 0; id < pool::k_inline_pools; ++id) {
      give_back(id, t.gen[id], t.state[id]);
      t.gen[id] = 0;
    }
    for (size_t i = 0; i < t_more.size(); ++i) give_back(pool::k_inline_pools + i, t_more[i].first, t_more[i].second);
    t_more.clear();
  }
};
static thread_local tls_cleanup t_cleanup;

pool::local_state& pool::local_slow() {
  if (id_ >= k_inline_pools) {
    size_t i = id_ - k_inline_pools;
    if (i < t_more.size() && t_more[i].first == gen_) return *static_cast<local_state*>(t_more[i].second);
  }
  return register_thread();
}

pool::local_state& pool::register_thread() {
  local_state* s;
  {
    std::lock_guard lk(locals_mu_);
    if (!free_locals_.empty()) {
      s = free_locals_.back();
      free_locals_.pop_back();
    } else {
      locals_.push_back(std::make_unique<local_state>());
      s = locals_.back().get();
    }
  }
  s->slot = epochs_->register_slot();
  (void)&t_cleanup;  // constructs it, so its destructor runs at thread exit
  if (id_ < k_inline_pools) {
    t_tls.gen[id_] = gen_;
    t_tls.state[id_] = s;
  } else {
    size_t i = id_ - k_inline_pools;
    if (t_more.size() <= i) t_more.resize(i + 1);
    t_more[i] = {gen_, s};
  }
  return *s;
}

// Called with the registry lock held (thread exit).
void pool::release_thread(local_state* s) {
  epochs_->release_slot(s->slot);
  heap_->drain(s->cache);
  std::lock_guard lk(locals_mu_);
  free_locals_.push_back(s);
}



void pool::emulate_write_latency() const noexcept {
  uint64_t ticks = static_cast<uint64_t>(t_unfenced_lines * write_ns_ * tsc_per_ns());
  t_unfenced_lines = 0;
  uint64_t end = __rdtsc() + ticks;
  while (__rdtsc() < end) _mm_pause();
}

alloc::heap_usage pool::usage() const {
  alloc::heap_usage u = heap_->usage();
  std::lock_guard lk(const_cast<std::mutex&>(locals_mu_));
  for (auto& l : locals_)
    for (unsigned c = 0; c < alloc::k_nclasses; ++c) {
      uint64_t n = __atomic_load_n(&l->cache.bins[c].count, __ATOMIC_RELAXED);
      u.used_blocks -= n;
      u.used_bytes -= n * alloc::class_size(c);
    }
  u.dram_bytes += locals_.size() * sizeof(local_state);
  return u;
}

void pool::unmap() {
  if (gen_) {
    std::lock_guard lk(pool_registry::mu());
    pool_registry::slots()[id_] = nullptr;
  }
  if (base_ && owns_mapping_) munmap(base_, map_len_);  // size_ may be less (validate)
  base_ = nullptr;
  if (fd_ >= 0) ::close(fd_);  // also drops the flock
  fd_ = -1;
  closed_ = true;
}

void pool::close() {
  if (closed_) return;
  if (!gen_) return unmap();  // open failed half-way: leave the file as it is
  {
    // A thread exiting now gives its state back under this lock: wait for
    // one in progress, and keep later ones from draining what close() drains.
    std::lock_guard lk(pool_registry::mu());
    closing_ = true;
  }
  epochs_->drain_all();
  {
    std::lock_guard lk(locals_mu_);
    for (auto& l : locals_) heap_->drain(l->cache);
  }
  heap_->release_reserve();  // free space again in the saved state
  if (!anonymous_) {
    auto& h = *hdr_;
    // A volatile open flushed nothing: everything it wrote reaches the media
    // before the clean flag can (the flag is written back below).
    if (mode_ == mode::volatile_) sync_to_media(base_, size_);
    heap_->save(base_ + h.meta_offset);
    persist(base_ + h.meta_offset, h.meta_size);
    h.meta_sum = checksum(base_ + h.meta_offset, h.meta_size);
    h.used_at_close = heap_->usage().used_bytes;
    persist(&h.root, 64);
    if (mode_ == mode::volatile_) sync_to_media(base_ + h.meta_offset, h.meta_size);
    h.clean = 1;
    persist(&h.clean, 8);
    if (mode_ == mode::volatile_) sync_to_media(&h.clean, 8);
  }
  unmap();
}

void pool::abandon() {
  if (!closed_) unmap();
}

pool::pool() = default;

pool::~pool() {
  try {
    close();
  } catch (...) {
  }
}

}  // namespace pmindex::pm

#include "shadow.hpp"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "sync/polite_wait.hpp"

namespace pmindex::crash {

namespace {

int current_tid() { return static_cast<int>(::syscall(SYS_gettid)); }

// The scans below read /proc with raw system calls into stack buffers:
// no malloc. A crash point runs them before each fork, and under ASan every
// freed DIR or FILE buffer sits in the allocator's quarantine, so the
// parent's resident memory grew with every crash point and each fork copied
// more page tables (copy_page_range: 15% of crashtest's profile on main,
// 29% with opendir/fopen here).

// 'R' running or runnable, 'S' asleep (a futex: blocked on a lock), ...
char thread_state(int tid) {
  char path[64];
  std::snprintf(path, sizeof path, "/proc/self/task/%d/stat", tid);
  int fd = ::open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return '?';
  char buf[512];
  ssize_t n = ::read(fd, buf, sizeof buf - 1);
  ::close(fd);
  buf[n > 0 ? n : 0] = 0;
  const char* p = std::strrchr(buf, ')');  // the name may hold spaces
  return p && p[1] == ' ' ? p[2] : '?';
}

// The other threads of this process (history workers, an index's
// background threads, registered or not): their kernel tids, at most
// out.size() (more: returns out.size() + 1, "too many to look at").
template <size_t N>
size_t other_tids(int self, std::array<int, N>& out) {
  int fd = ::open("/proc/self/task", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return 0;
  size_t n = 0;
  alignas(8) char buf[4096];
  for (;;) {
    long got = ::syscall(SYS_getdents64, fd, buf, sizeof buf);
    if (got <= 0) break;
    for (long at = 0; at < got;) {
      // struct linux_dirent64: ino (8), off (8), reclen (2), type (1), name
      unsigned short reclen;
      std::memcpy(&reclen, buf + at + 16, sizeof reclen);
      int tid = std::atoi(buf + at + 19);
      at += reclen;
      if (tid <= 0 || tid == self) continue;
      if (n == N) {
        ::close(fd);
        return N + 1;
      }
      out[n++] = tid;
    }
  }
  ::close(fd);
  return n;
}

// How long a crash point waits for other threads to park before it goes on
// anyway. A thread still running then is harmless for soundness (a crash can
// strike mid-store), but the leak count check is skipped for that image, and
// a thread that holds a lock of the C library's or the sanitizer's allocator
// at fork() leaves it held in the child. History workers may spin on an
// index lock the crashing thread holds (they never park): a short wait. In a
// single-threaded history the others are the index's background threads,
// which block or reach an event: a long one.
constexpr auto k_park_wait = std::chrono::milliseconds(3);
constexpr auto k_background_wait = std::chrono::seconds(2);

}  // namespace

void shadow_observer::on_map(char* base, uint64_t size) {
  std::lock_guard lk(mu_);
  unmap();
  base_ = base;
  size_ = size;
  // Fresh anonymous memory reads as zeros: that is the durable image before
  // the first fence.
  void* d = mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  void* v = mmap(nullptr, size / k_line * 8, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (d == MAP_FAILED || v == MAP_FAILED) std::abort();  // tiny next to the pool just mapped
  durable_ = static_cast<char*>(d);
  dver_ = static_cast<uint64_t*>(v);
}

void shadow_observer::unmap() {
  if (durable_) munmap(durable_, size_);
  if (dver_) munmap(dver_, size_ / k_line * 8);
  durable_ = nullptr;
  dver_ = nullptr;
}

namespace {
// The observer whose crash points a sleeping waiter parks for: the newest
// one alive (a checker makes the next before it drops the last), and its
// process: a forked child inherits both but must never park (its only
// thread is the one that holds mu_).
std::atomic<shadow_observer*> g_observer{nullptr};
std::atomic<pid_t> g_observer_pid{0};

void park_after_sleep() {
  shadow_observer* o = g_observer.load(std::memory_order_acquire);
  if (o && ::getpid() == g_observer_pid.load(std::memory_order_relaxed)) o->park_if_crashing();
}
}  // namespace

shadow_observer::shadow_observer(uint32_t threads) : threads_(threads) {
  g_observer_pid.store(::getpid(), std::memory_order_relaxed);
  g_observer.store(this, std::memory_order_release);
  common::g_after_sleep.store(&park_after_sleep, std::memory_order_release);
}

shadow_observer::~shadow_observer() {
  shadow_observer* me = this;
  if (g_observer.compare_exchange_strong(me, nullptr)) common::g_after_sleep.store(nullptr);
  unmap();
}

shadow_observer::worker& shadow_observer::me() {
  auto id = std::this_thread::get_id();
  for (auto& w : workers_)
    if (w->id == id) return *w;
  workers_.push_back(std::make_unique<worker>());
  workers_.back()->id = id;
  workers_.back()->tid = current_tid();
  return *workers_.back();
}

void shadow_observer::register_worker() {
  std::lock_guard lk(mu_);
  me();
}

void shadow_observer::on_flush(const void* addr, size_t len) {
  std::unique_lock lk(mu_);
  event(lk, false);
  auto a = reinterpret_cast<uintptr_t>(addr);
  auto b = reinterpret_cast<uintptr_t>(base_);
  if (a < b || a + len > b + size_ || !len) return;  // no line of the pool
  auto& w = me();
  for (uint64_t l = (a - b) / k_line; l * k_line < a - b + len; ++l) {
    auto& p = w.pending[l];
    p.ver = events_;  // this event's number + 1: later than any durable version
    std::memcpy(p.data.data(), base_ + l * k_line, k_line);
  }
}

void shadow_observer::on_fence() {
  std::unique_lock lk(mu_);
  event(lk, true);
  auto& w = me();
  // sfence orders this thread's earlier flushes: their lines are durable
  // with (at least) the value each had when it was flushed.
  for (auto& [l, p] : w.pending) {
    if (p.ver <= dver_[l]) continue;  // a later flush of the line is durable already
    std::memcpy(&durable_[l * k_line], p.data.data(), k_line);
    dver_[l] = p.ver;
  }
  w.pending.clear();
}

// Counts the event; if it is a crash point, crashes before it takes effect.
void shadow_observer::event(std::unique_lock<std::mutex>& lk, bool /*fence*/) {
  // Another thread crashes: park here (a history worker, or an index's
  // background thread in any history).
  if (crashing_.load(std::memory_order_relaxed)) {
    auto& w = me();
    while (crashing_.load(std::memory_order_relaxed)) {
      w.parked = true;
      parked_cv_.notify_all();
      resume_cv_.wait(lk);
      w.parked = false;
    }
  }
  uint64_t k = events_++;
  if (listener_ && listener_->wants(k)) freeze_and_crash(lk, k);
}

// A thread that slept in polite_wait (sync/polite_wait.hpp): it parks if
// a crash point is under way. The crashing thread never sleeps there while
// it crashes (it holds mu_).
void shadow_observer::park_if_crashing() {
  if (!crashing_.load(std::memory_order_seq_cst)) return;
  if (crasher_tid_.load(std::memory_order_relaxed) == current_tid()) return;
  park();
}

void shadow_observer::park() {
  std::unique_lock lk(mu_);
  auto& w = me();
  while (crashing_.load(std::memory_order_relaxed)) {
    w.parked = true;
    parked_cv_.notify_all();
    resume_cv_.wait(lk);
    w.parked = false;
  }
}

void shadow_observer::worker_done() {
  std::lock_guard lk(mu_);
  me().done = true;
  parked_cv_.notify_all();
}

// A background thread may be crashing (its crash point waits for the others
// with mu_ released): the caller parks until it is done.
void shadow_observer::wait_crash_end(std::unique_lock<std::mutex>& lk) {
  if (!crashing_.load(std::memory_order_relaxed)) return;
  auto& w = me();
  while (crashing_.load(std::memory_order_relaxed)) {
    w.parked = true;
    parked_cv_.notify_all();
    resume_cv_.wait(lk);
    w.parked = false;
  }
}

void shadow_observer::set_listener(listener* l) {
  std::unique_lock lk(mu_);
  wait_crash_end(lk);
  listener_ = l;
}

void shadow_observer::crash_now() {
  std::unique_lock lk(mu_);
  wait_crash_end(lk);  // one crash point at a time
  uint64_t k = events_;
  if (listener_ && listener_->wants(k)) freeze_and_crash(lk, k);
}

// Every other thread of the process, not only the workers that have
// reported an event: an index's background thread may be running (in
// malloc, say) before its first flush.
bool shadow_observer::others_frozen(const worker* self) const {
  std::array<int, 512> tids;
  const size_t n = other_tids(self->tid, tids);
  if (n > tids.size()) return false;
  for (size_t i = 0; i < n; ++i) {
    const int tid = tids[i];
    bool parked = false;
    for (auto& w : workers_) parked |= w->tid == tid && (w->parked || w->done);
    if (parked) continue;
    // Asleep in the kernel ('S'): blocked on a lock a parked thread holds
    // (or in join, or idle), so it cannot run until we resume: as good as
    // parked; or sleeping in polite_wait, after which it parks (see
    // park_if_crashing). Not 'D': a thread waiting uninterruptibly in the
    // kernel (an mmap behind mmap_lock, a page fault) goes on by itself,
    // possibly from inside malloc with the allocator's lock held (a DPTree
    // merge thread's refill hung a CI child that way, it seems).
    if (thread_state(tid) != 'S') return false;
  }
  return true;
}

// The fork of each crash image happens with every other thread parked or
// asleep, in single-threaded histories too: an index's background thread
// (DPTree's merge, PACTree's SMO thread) that ran on while the crashing
// thread forked could hold an allocator lock, which stays held forever in
// the child (ASan's allocator has no fork handler: the child hangs).
void shadow_observer::freeze_and_crash(std::unique_lock<std::mutex>& lk, uint64_t k) {
  auto& self = me();
  crasher_tid_.store(self.tid, std::memory_order_relaxed);
  // Before the state scan, and seq_cst: a sleeper the scan finds asleep
  // sees the flag when it wakes, and parks (park_if_crashing).
  crashing_.store(true, std::memory_order_seq_cst);
  // After the history (every worker done) the others are background
  // threads, which block or reach an event: the long wait, as in a
  // single-threaded history (a PACTree SMO thread forked beside in
  // malloc hung a child twice in crash_pactree_threads4).
  size_t done = 0;
  for (auto& w : workers_) done += w->done;
  const bool history_over = done >= threads_;
  auto deadline =
      std::chrono::steady_clock::now() + (threads_ > 1 && !history_over ? k_park_wait : k_background_wait);
  bool frozen;
  while (!(frozen = others_frozen(&self))) {
    if (parked_cv_.wait_until(
            lk, std::min(deadline, std::chrono::steady_clock::now() + std::chrono::microseconds(100))) ==
            std::cv_status::timeout &&
        std::chrono::steady_clock::now() >= deadline) {
      frozen = others_frozen(&self);
      break;
    }
  }
  listener_->crash(k, frozen);
  crashing_.store(false, std::memory_order_release);
  resume_cv_.notify_all();
}

std::vector<candidate> shadow_observer::candidates() const {
  std::vector<candidate> out;
  if (!base_) return out;
  const uint64_t lines = size_ / k_line;
  // Lines with unfenced flushes newer than their durable value.
  std::unordered_map<uint64_t, std::vector<const char*>> pend;
  for (auto& w : workers_)
    for (auto& [l, p] : w->pending)
      if (p.ver > dver_[l]) pend[l].push_back(p.data.data());
  // Lines whose current value differs from the durable one. Pages never
  // touched are not resident and read as zeros, like their durable image.
  const uint64_t page = static_cast<uint64_t>(sysconf(_SC_PAGESIZE));
  std::vector<unsigned char> res((size_ + page - 1) / page);
  bool have_res = mincore(base_, size_, res.data()) == 0;
  for (uint64_t pg = 0; pg < res.size(); ++pg) {
    if (have_res && !(res[pg] & 1)) continue;
    const uint64_t off = pg * page, len = std::min(page, size_ - off);
    if (std::memcmp(base_ + off, &durable_[off], len) == 0) continue;
    for (uint64_t l = off / k_line; l < (off + len) / k_line; ++l) {
      if (std::memcmp(base_ + l * k_line, &durable_[l * k_line], k_line) == 0) continue;
      if (!pend.count(l)) pend[l];  // dirty, no pending flush: durable or current
    }
  }
  out.reserve(pend.size());
  for (auto& [l, ps] : pend) {
    if (l >= lines) continue;
    candidate c{};
    c.line = l;
    const char* cur = base_ + l * k_line;
    const char* dur = &durable_[l * k_line];
    c.state[c.n++] = dur;
    for (const char* p : ps) {
      if (c.n == k_max_states) break;
      bool dup = std::memcmp(p, cur, k_line) == 0;
      for (uint32_t i = 0; i < c.n && !dup; ++i) dup = std::memcmp(p, c.state[i], k_line) == 0;
      if (!dup) c.state[c.n++] = p;
    }
    // Current equal to durable and no distinct pending state: nothing to choose.
    if (c.n == 1 && std::memcmp(cur, dur, k_line) == 0) continue;
    out.push_back(c);
  }
  std::sort(out.begin(), out.end(), [](const candidate& a, const candidate& b) { return a.line < b.line; });
  return out;
}

}  // namespace pmindex::crash

// The timed loops of the runner (runner.cpp's steps call them): threads
// started on a common go, the prefill of a slice of ids, and the run phase
// (generate a batch untimed, execute it timed), each for the u64 fast path
// and for the byte path. Internal to the harness.
#pragma once

#include <pthread.h>
#include <sched.h>
#include <x86intrin.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <ctime>
#include <memory>
#include <new>
#include <numeric>
#include <string>
#include <thread>
#include <vector>

#include "dataset.hpp"
#include "pmindex/error.hpp"
#include "pmindex/pm/counters.hpp"
#include "runner.hpp"
#include "targets.hpp"

namespace pmindex::bench::detail {

using steady = std::chrono::steady_clock;
inline constexpr size_t k_batch = 16384;      // ops generated per untimed step
inline constexpr size_t k_check_every = 256;  // ops between stop/window checks (power of 2)
inline constexpr size_t k_prefill_chunk = 4096;  // byte path: keys made per untimed step

inline double secs(steady::duration d) { return std::chrono::duration<double>(d).count(); }

// This thread's CPU time: on a machine shared with other work, ops per CPU
// second is steadier than ops per wall second (preemption is not counted).
inline double thread_cpu_seconds() {
  timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

struct shared_state {
  std::atomic<uint32_t> ready{0};
  std::atomic<bool> go{false};
  std::atomic<bool> stop{false};
  std::atomic<uint64_t> progress{0};  // ops done (approximate, for the progress line)
  std::atomic<uint32_t> finished{0};
  steady::time_point start;
  steady::duration window{};
};

// The byte path's batch: each op's key and value, made before the batch is
// timed. Keys a dataset stores are views of it; generated keys and the
// values live in `arena` (offsets while it grows, views once it is done).
struct byte_batch {
  std::string arena, kbuf;
  std::vector<std::string_view> key, value;
  std::vector<size_t> koff, voff;  // SIZE_MAX: the view is final already

  void reset(size_t n) {
    arena.clear();
    key.resize(n);
    value.resize(n);
    koff.assign(n, SIZE_MAX);
    voff.assign(n, SIZE_MAX);
  }
  // Key i of `d`'s record `id`: a view of the dataset's memory, or a copy.
  void set_key(size_t i, const dataset& d, uint64_t id) {
    std::string_view k = d.key(id, kbuf);
    if (k.data() == kbuf.data()) {
      koff[i] = arena.size();
      arena.append(k);
    }
    key[i] = k;
  }
  void set_value(size_t i, std::string_view v) {
    voff[i] = arena.size();
    arena.append(v);
    value[i] = std::string_view(nullptr, v.size());
  }
  // Once the arena stopped growing: views into it.
  void seal() {
    for (size_t i = 0; i < key.size(); ++i) {
      if (koff[i] != SIZE_MAX) key[i] = {arena.data() + koff[i], key[i].size()};
      value[i] = voff[i] != SIZE_MAX ? std::string_view(arena.data() + voff[i], value[i].size()) : std::string_view();
    }
  }
};

struct alignas(64) thread_ctx {
  uint32_t id = 0;
  std::unique_ptr<op_generator> gen;
  std::vector<op> batch;
  size_t batch_size = k_batch;
  std::vector<record> scanbuf;
  op_stats per[k_nops];
  double ns_per_tick = 1;
  uint64_t tsc_overhead = 0;  // ticks an empty bracket measures (subtracted)
  std::vector<uint64_t> series;  // ops done at each window end
  uint64_t done = 0;
  double busy = 0;
  double cpu = 0;          // thread CPU time inside the timed sections
  steady::time_point end;  // when this thread finished its phase
  bool counted = false;    // count mode (--ops): run `budget` ops, not until stop
  uint64_t budget = 0;     // count mode: this thread's ops
  uint64_t load_ok = 0;
  double load_busy = 0;
  pm::counters load_c;
  uint64_t bad_values = 0;
  bool exhausted = false;
  std::string error;
  bool out_of_memory = false;  // error is a std::bad_alloc
  errc code = errc::failure;   // a pmindex::error's code (pool full: errc::pool_full, ...)
  // byte path
  const dataset* data = nullptr;
  uint32_t value_size = 8;
  byte_batch bb;
  std::string valbuf, rmwbuf;
  record_buffer recbuf;
};

// Thread t to the (t mod n)-th of the n CPUs it may run on (its inherited
// affinity), so `numactl --cpunodebind=N` keeps every pinned thread on node N.
inline void pin_to(uint32_t t) {
  cpu_set_t allowed;
  if (sched_getaffinity(0, sizeof allowed, &allowed) != 0) return;
  const int n = CPU_COUNT(&allowed);
  if (n <= 0) return;
  int want = static_cast<int>(t % static_cast<uint32_t>(n));
  for (int c = 0; c < CPU_SETSIZE; ++c)
    if (CPU_ISSET(c, &allowed) && want-- == 0) {
      cpu_set_t set;
      CPU_ZERO(&set);
      CPU_SET(c, &set);
      pthread_setaffinity_np(pthread_self(), sizeof set, &set);
      return;
    }
}

// A stride coprime with m: visiting lo + (j * step) % m for j < m touches
// every id once in a scattered order (so dense keys are not inserted sorted).
inline uint64_t coprime_step(uint64_t m) {
  if (m < 3) return 1;
  uint64_t s = static_cast<uint64_t>(static_cast<double>(m) * 0.6180339887) | 1;
  while (std::gcd(s, m) != 1) s += 2;
  return s % m ? s % m : 1;
}

// The id the prefill's i-th record takes: i itself, or (spread) a random
// id of the i-th of n equal slices of [0, space): distinct, and with
// space = 2n a random half of the ids.
struct prefill_ids {
  uint64_t n, space, seed;
  bool spread;
  uint64_t operator()(uint64_t i) const noexcept {
    if (!spread) return i;
    auto lo = static_cast<uint64_t>(static_cast<unsigned __int128>(i) * space / n);
    auto hi = static_cast<uint64_t>(static_cast<unsigned __int128>(i + 1) * space / n);
    return lo + mix64(i ^ seed) % (hi - lo);
  }
};

// TSC reads that bracket the operation: rdtsc alone is not ordered with
// the loads before and after it, so a pointer chase still in flight could
// end after the second read (latencies far too short). lfence before the
// first read and rdtscp + lfence at the end keep the operation inside.
inline uint64_t tsc_begin() noexcept {
  _mm_lfence();
  uint64_t t = __rdtsc();
  _mm_lfence();
  return t;
}
inline uint64_t tsc_end() noexcept {
  unsigned aux;
  uint64_t t = __rdtscp(&aux);
  _mm_lfence();
  return t;
}

// ------------------------------------------------------------ prefill

template <class T>
void prefill_slice(T& tgt, uint64_t lo, uint64_t hi, const key_map& keys, const prefill_ids& ids, bool sorted,
                   thread_ctx& c, shared_state& s) {
  const uint64_t m = hi - lo, step = coprime_step(m);
  std::vector<uint64_t> in_order;  // sorted: the slice's keys, made and sorted untimed
  if (sorted) {
    in_order.resize(m);
    for (uint64_t j = 0; j < m; ++j) in_order[j] = keys(ids(lo + j));
    std::sort(in_order.begin(), in_order.end());
  }
  auto c0 = pm::thread_counters();
  auto t0 = steady::now();
  uint64_t pos = 0, ok = 0;
  for (uint64_t j = 0; j < m; ++j) {
    uint64_t k = sorted ? in_order[j] : keys(ids(lo + pos));
    ok += tgt.insert(k, value_of(k));
    pos += step;
    if (pos >= m) pos -= m;
    if ((j & 4095) == 4095) s.progress.fetch_add(4096, std::memory_order_relaxed);
  }
  c.load_busy = secs(steady::now() - t0);
  c.load_ok = ok;
  c.load_c = pm::thread_counters() - c0;
}

// The byte path: keys and values of a chunk are made untimed, then inserted.
template <class T>
void prefill_slice_bytes(T& tgt, uint64_t lo, uint64_t hi, const prefill_ids& ids, thread_ctx& c, shared_state& s) {
  const uint64_t m = hi - lo, step = coprime_step(m);
  auto& bb = c.bb;
  pm::counters cnt{};
  double busy = 0;
  uint64_t pos = 0, ok = 0;
  for (uint64_t j = 0; j < m;) {
    const size_t n = static_cast<size_t>(std::min<uint64_t>(k_prefill_chunk, m - j));
    bb.reset(n);
    for (size_t i = 0; i < n; ++i, ++j) {
      const uint64_t id = ids(lo + pos);
      pos += step;
      if (pos >= m) pos -= m;
      bb.set_key(i, *c.data, id);
      value_bytes(id, c.value_size, c.valbuf);
      bb.set_value(i, c.valbuf);
    }
    bb.seal();
    auto c0 = pm::thread_counters();
    auto t0 = steady::now();
    for (size_t i = 0; i < n; ++i) ok += tgt.bytes_insert(bb.key[i], bb.value[i]);
    busy += secs(steady::now() - t0);
    cnt += pm::thread_counters() - c0;
    s.progress.fetch_add(n, std::memory_order_relaxed);
  }
  c.load_busy = busy;
  c.load_ok = ok;
  c.load_c = cnt;
}

// ------------------------------------------------------------ run phase

// Always inlined into the loop: a call per operation costs the null index
// ~25% (GCC stops inlining it once the unit holds both paths).
#define PMINDEX_BENCH_INLINE inline __attribute__((always_inline))

// One operation inside the timed batch: `body` runs it and says whether it
// succeeded; its persistence counters and (when sampled) latency are kept.
template <class Body>
PMINDEX_BENCH_INLINE void timed_op(const op& o, thread_ctx& c, Body&& body) {
  op_stats& st = c.per[static_cast<unsigned>(o.type)];
  const pm::counters& tc = pm::t_counters;
  const uint64_t f0 = tc.lines_flushed, e0 = tc.fences, a0 = tc.allocs;
  const uint64_t t0 = o.sampled ? tsc_begin() : 0;
  const bool ok = body();
  if (o.sampled) {
    uint64_t d = tsc_end() - t0;
    d = d > c.tsc_overhead ? d - c.tsc_overhead : 0;
    st.lat.record(static_cast<uint64_t>(static_cast<double>(d) * c.ns_per_tick));
  }
  ++st.done;
  st.ok += ok;
  st.flushes += tc.lines_flushed - f0;
  st.fences += tc.fences - e0;
  st.allocs += tc.allocs - a0;
}

template <class T>
PMINDEX_BENCH_INLINE void exec(T& tgt, const op& o, uint64_t seq, thread_ctx& c) {
  timed_op(o, c, [&]() __attribute__((always_inline)) {
    switch (o.type) {
      case op_type::read: {
        read_result r = tgt.read(o.key);
        if (__builtin_expect(r.bad, 0)) ++c.bad_values;  // no store per read
        return r.found;
      }
      case op_type::insert: return tgt.insert(o.key, value_of(o.key));
      case op_type::update: return tgt.update(o.key, u64_update_value(o.key, seq));
      case op_type::remove: return tgt.remove(o.key);
      case op_type::scan: return tgt.scan(o.key, o.len, c.scanbuf.data()) > 0;
      case op_type::rmw: return tgt.rmw(o.key, seq);
    }
    return false;
  });
}

// The byte path: op.key is the record id; its key (and the value an insert
// or update writes) were made before the batch was timed.
template <class T>
PMINDEX_BENCH_INLINE void exec_bytes(T& tgt, const op& o, std::string_view k, std::string_view v, uint64_t seq,
                                     thread_ctx& c) {
  timed_op(o, c, [&]() __attribute__((always_inline)) {
    switch (o.type) {
      case op_type::read: {
        bool found = tgt.bytes_read(k, &c.valbuf);
        if (found && !value_check(o.key, c.valbuf)) ++c.bad_values;
        return found;
      }
      case op_type::insert: return tgt.bytes_insert(k, v);
      case op_type::update: return tgt.bytes_update(k, v);
      case op_type::remove: return tgt.bytes_remove(k);
      case op_type::scan: return tgt.bytes_scan(k, o.len, c.recbuf) > 0;
      case op_type::rmw: {
        // Read, check, then write the next version (made here: it depends
        // on the read).
        if (!tgt.bytes_read(k, &c.valbuf)) return false;
        if (!value_check(o.key, c.valbuf)) ++c.bad_values;
        value_bytes(o.key, seq + 1, c.value_size, c.rmwbuf);
        return tgt.bytes_update(k, c.rmwbuf);
      }
    }
    return false;
  });
}

// Keys and values of batch[0, n) for exec_bytes (untimed). An update
// writes version seq + 1 of the record's value, where seq numbers the
// thread's ops (distinct per op, never 0).
inline void make_byte_batch(thread_ctx& c, size_t n, uint64_t seq0) {
  auto& bb = c.bb;
  bb.reset(n);
  for (size_t i = 0; i < n; ++i) {
    const op& o = c.batch[i];
    bb.set_key(i, *c.data, o.key);
    if (o.type == op_type::insert || o.type == op_type::update) {
      value_bytes(o.key, o.type == op_type::insert ? 0 : seq0 + i + 1, c.value_size, c.valbuf);
      bb.set_value(i, c.valbuf);
    }
  }
  bb.seal();
}

template <bool Bytes, class T>
void run_slice(T& tgt, thread_ctx& c, shared_state& s) {
  auto next_window = s.start + s.window;
  uint64_t done = 0;
  double busy = 0, cpu = 0;
  while (!s.stop.load(std::memory_order_relaxed) && (!c.counted || done < c.budget)) {
    size_t n = c.batch_size;
    if (c.counted && c.budget - done < n) n = static_cast<size_t>(c.budget - done);
    n = c.gen->fill(c.batch.data(), n);  // untimed
    if constexpr (Bytes) make_byte_batch(c, n, done);
    if (n == 0) {  // fresh inserts ran out of the dataset's keys: this thread ends
      c.exhausted = true;
      break;
    }
    const double c0 = thread_cpu_seconds();
    auto t0 = steady::now();
    size_t i = 0;
    for (; i < n; ++i) {
      if ((i & (k_check_every - 1)) == 0 && i) {
        if (s.stop.load(std::memory_order_relaxed)) break;
        auto now = steady::now();
        while (now >= next_window) {
          c.series.push_back(done + i);
          next_window += s.window;
        }
      }
      if constexpr (Bytes) exec_bytes(tgt, c.batch[i], c.bb.key[i], c.bb.value[i], done + i, c);
      else exec(tgt, c.batch[i], done + i, c);
    }
    busy += secs(steady::now() - t0);
    cpu += thread_cpu_seconds() - c0;
    done += i;
    s.progress.fetch_add(i, std::memory_order_relaxed);
  }
  c.done = done;
  c.busy = busy;
  c.cpu = cpu;
}

// Starts one thread per ctx running body(t, ctx) after a common go; returns
// when all finished, with the seconds from the go to the last thread's end.
// The caller's `during` runs on this thread meanwhile (timer, progress line).
template <class Body, class During>
double in_threads(bool pin, std::vector<thread_ctx>& ctx, shared_state& s, Body body, During during) {
  s.ready = 0;
  s.go = false;
  s.stop = false;
  s.progress = 0;
  s.finished = 0;
  std::vector<std::thread> th;
  th.reserve(ctx.size());
  for (uint32_t t = 0; t < ctx.size(); ++t)
    th.emplace_back([&, t] {
      if (pin) pin_to(t);
      s.ready.fetch_add(1);
      while (!s.go.load(std::memory_order_acquire)) std::this_thread::yield();
      try {
        body(t, ctx[t]);
      } catch (const std::bad_alloc&) {
        ctx[t].error = "out of memory (a DRAM allocation failed)";
        ctx[t].out_of_memory = true;
        s.stop = true;
      } catch (const error& e) {  // typed: the run ends with its exit code
        ctx[t].error = e.what();
        ctx[t].code = e.code();
        s.stop = true;
      } catch (const std::exception& e) {
        ctx[t].error = e.what();
        s.stop = true;
      }
      ctx[t].end = steady::now();
      s.finished.fetch_add(1);
    });
  while (s.ready.load() < ctx.size()) std::this_thread::yield();
  s.start = steady::now();
  s.go.store(true, std::memory_order_release);
  during();
  for (auto& t : th) t.join();
  auto last = s.start;
  for (auto& c : ctx) {
    if (!c.error.empty())
      throw error(c.out_of_memory ? errc::out_of_memory : c.code, "benchmark thread failed: " + c.error);
    last = std::max(last, c.end);
  }
  return secs(last - s.start);  // start to the last thread's end
}

}  // namespace pmindex::bench::detail

// The crash checker's persistence observer: a shadow of the durable image of
// one observed pool, and the place where crash points are taken.
//
// Model (x86: clwb/clflushopt then sfence). A flush of a line records its
// value at that moment as pending for the flushing thread; that thread's next
// fence makes every line it has pending durable with the recorded value
// (unless a later flush of the line is already durable: versions are event
// numbers). At a crash, a line that is not durable holds some prefix of the
// stores made to it since: the checker knows three such states, the durable
// value, the value at an unfenced flush, and the current value.
//
// Threads: every event takes one mutex. A crash point freezes the others:
// they park at their next event or operation boundary, or are found blocked
// in the kernel (/proc state S), before the crash thread forks; a waiter
// that sleeps in common::polite_wait parks after its sleep.
#pragma once

#include <array>
#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <thread>
#include <unordered_map>
#include <vector>

#include "pmindex/pm/observer.hpp"

namespace pmindex::crash {

inline constexpr uint64_t k_line = 64;
inline constexpr unsigned k_max_states = 6;  // durable + pending values (current is implicit)

// A line that a crash image may set to one of several states: state[0] is
// the durable value, state[1..n) values at unfenced flushes; choice n keeps
// the current value.
struct candidate {
  uint64_t line;
  uint32_t n;
  const char* state[k_max_states];
};

class shadow_observer final : public pm::persist_observer {
 public:
  // Called before event k takes effect, with every other thread frozen as
  // far as possible (`frozen`: no other thread can be running).
  class listener {
   public:
    virtual ~listener() = default;
    virtual bool wants(uint64_t k) = 0;
    virtual void crash(uint64_t k, bool frozen) = 0;
  };

  // The newest observer alive in a process also parks threads that slept
  // in common::polite_wait while it crashes (park_if_crashing).
  explicit shadow_observer(uint32_t threads);
  ~shadow_observer() override;

  void on_map(char* base, uint64_t size) override;
  void on_flush(const void* addr, size_t len) override;
  void on_fence() override;

  // Waits for a crash point in progress (a background thread's) to end.
  void set_listener(listener* l);
  uint64_t events() const { return events_; }
  char* base() const { return base_; }
  uint64_t size() const { return size_; }

  // Worker threads of a multi-threaded history: register (its kernel tid),
  // park at operation boundaries when asked, and say when they are done.
  void register_worker();
  bool crash_pending() const { return crashing_.load(std::memory_order_acquire); }
  void park();
  void park_if_crashing();
  void worker_done();
  // A crash point outside any event (the end of the history): freezes the
  // same way, then calls the listener.
  void crash_now();

  // The lines a crash image may change; state frozen (call from crash()).
  std::vector<candidate> candidates() const;

 private:
  struct pend {
    uint64_t ver;
    std::array<char, k_line> data;
  };
  struct worker {
    std::thread::id id;
    int tid = 0;
    bool parked = false, done = false;
    std::unordered_map<uint64_t, pend> pending;  // line -> last unfenced flush
  };
  worker& me();  // mu_ held
  void event(std::unique_lock<std::mutex>& lk, bool fence);
  void freeze_and_crash(std::unique_lock<std::mutex>& lk, uint64_t k);
  void wait_crash_end(std::unique_lock<std::mutex>& lk);  // parked meanwhile
  bool others_frozen(const worker* self) const;
  void unmap();

  const uint32_t threads_;
  char* base_ = nullptr;
  uint64_t size_ = 0;
  // Both mapped, not vectors: untouched pages stay zero and unmapped, which
  // keeps fork() (one per crash image) cheap.
  char* durable_ = nullptr;
  uint64_t* dver_ = nullptr;  // per line: version (event) of the durable value
  uint64_t events_ = 0;
  listener* listener_ = nullptr;

  mutable std::mutex mu_;
  std::condition_variable resume_cv_, parked_cv_;
  std::atomic<bool> crashing_{false};
  std::atomic<int> crasher_tid_{0};
  std::vector<std::unique_ptr<worker>> workers_;
};

}  // namespace pmindex::crash

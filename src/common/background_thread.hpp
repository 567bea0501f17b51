// The thread an index runs beside its callers (DPTree's merges, PACTree's
// structure changes).
//
// Why not a plain std::thread: a new thread inherits the CPU affinity of
// the thread that starts it. DPTree starts its merge thread at the first
// merge, from a writer; under `pmindex bench --pin` (or PiBench, or any
// caller that pins its threads) that writer is pinned to one CPU, so the
// merges that should run on a core of their own shared the writer's: a
// 1-thread update90insert10 used one core of two in all, the writer asleep
// a third of the time waiting for merges.
// The thread takes the affinity of the process's main thread instead:
// every CPU the process may run on, or what the user asked for with
// taskset/numactl (they set the main thread's); the inherited one if that
// cannot be read.
#pragma once

#include <pthread.h>
#include <sched.h>
#include <unistd.h>

#include <thread>
#include <utility>

namespace pmindex::common {

template <class F>
std::thread background_thread(F&& body) {
  return std::thread([body = std::forward<F>(body)]() mutable {
    cpu_set_t all;
    if (sched_getaffinity(::getpid(), sizeof all, &all) == 0)  // the main thread's
      pthread_setaffinity_np(pthread_self(), sizeof all, &all);
    body();
  });
}

}  // namespace pmindex::common

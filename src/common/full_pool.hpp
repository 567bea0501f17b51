// A write that met a full pool runs once more after the blocks its thread
// retired came back (pool::reclaim_before_full). Retired blocks wait for
// every thread pinned in an older epoch: one descheduled mid-operation
// holds back all that the others retire meanwhile, and a writer with a
// core to itself fills a small pool with them in one time slice, while
// the records it holds take a fraction of it. An index's write that throws
// error(pool_full) has changed nothing, so it may run again.
#pragma once

#include "pmindex/error.hpp"
#include "pmindex/pm/pool.hpp"

namespace pmindex::common {

// Runs write() (which pins itself: the caller is unpinned) and, if it
// throws pool_full, once more after reclaim_before_full.
template <class Write>
auto retry_when_full(pm::pool& p, Write&& write) {
  try {
    return write();
  } catch (const error& e) {
    if (e.code() != errc::pool_full) throw;
  }
  p.reclaim_before_full();
  return write();
}

}  // namespace pmindex::common

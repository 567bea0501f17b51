// The harness's policy, for every caller of run() (the command line, the
// server, the Python package): which indexes "all" means, which mode each
// runs in, whether it can run the dataset and value size at all (else it is
// skipped with a reason), and how large a pool to make.
#pragma once

#include <string>
#include <vector>

#include "runner.hpp"

namespace pmindex::bench {

// "all" (every registered index) or a comma-separated list; throws
// error(usage) for an unknown name.
std::vector<std::string> select_indexes(const std::string& list);

// Fits `cfg` (cfg.index set) to its index: a volatile-only index runs in
// dram when the mode was not given (mode_given false). An empty reason: the
// run can go ahead; else why the index cannot run it ("no mode persist",
// "takes no byte keys", "keys up to 8 bytes", ...), and whether it is the
// mode (an error when the index was named; a skip when it came with "all").
struct fit {
  std::string reason;
  bool mode = false;
  explicit operator bool() const noexcept { return reason.empty(); }
};
fit fit_to_index(run_config& cfg, bool mode_given);

// A pool size for the runs of `cfg` over `phases`: room for the prefill and
// the inserts a run could make, at the index's pool_bytes_per_record (512
// unless its entry says more) plus twice the key and value bytes on the byte
// path, at least 256 MiB, in whole MiB.
uint64_t default_pool_size(const run_config& cfg, const std::vector<workload>& phases);

// `want` bytes, or nine tenths of the free space of the file system that
// holds `pool_path` when that is less (a pool is allocated whole when it is
// created, and the estimate above counts inserts at 4M per second per
// thread: an upper bound that a 10M-record run of a trie would not fit in
// most RAM disks). At least 256 MiB, in whole MiB.
uint64_t cap_to_free_space(uint64_t want, const std::string& pool_path);

}  // namespace pmindex::bench

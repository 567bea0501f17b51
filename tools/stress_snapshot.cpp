// `pmindex stress --check snapshot`: range queries must be atomic snapshots
// (PermART's promise). Beside the stress workers, one writer thread toggles
// the check's own keys in a recorded order while two range threads check
// every range(lo, hi) / scan(from, n) result against some prefix of that
// order (see include/pmindex/testing/snapshot_check.hpp). Other threads'
// keys in a result are ignored.
#include <cstdio>

#include "testing/snapshot_check.hpp"
#include "stress.hpp"

namespace pmindex::cli {
namespace {

const stress_check_registrar k_snapshot_check({
    "snapshot", "range/scan results equal the check's keys after some prefix of its recorded writes",
    [](stress_context& ctx) -> uint64_t {
      checks::snapshot_check_options o;
      o.writers = 1;
      o.readers = 2;
      o.universe = 2048;
      o.seed = ctx.seed;
      o.key = ctx.key;
      o.stop = &ctx.stop;
      o.final_state = &ctx.oracle;
      auto r = checks::run_snapshot_check(ctx.idx, o);
      *ctx.ops += r.ops + r.queries;
      if (!r.ok()) ctx.report(r.first + " (" + std::to_string(r.violations) + " violations)");
      std::fprintf(stderr, "stress: snapshot check: %llu writes, %llu range results checked, %llu violations\n",
                   (unsigned long long)r.ops, (unsigned long long)r.queries, (unsigned long long)r.violations);
      return r.violations;
    },
    nullptr, /*needs_scans=*/true});

}  // namespace
}  // namespace pmindex::cli

// pmindex keys --dataset D [-n N] [--seed S] [--json]: what a dataset's
// keys look like (bench/key_stats.hpp), to choose datasets and check them.
#include <cstdio>

#include "commands.hpp"
#include "dataset.hpp"
#include "key_stats.hpp"
#include "pmindex/error.hpp"

namespace pmindex::cli {

int cmd_keys(args& a) {
  std::string spec = a.str("dataset", "");
  uint64_t n = a.u64("records", 1000000, 1, uint64_t{1} << 36);
  uint64_t seed = a.u64("seed", 1, 0, UINT64_MAX);
  std::string uni = a.str("universe", "sparse");
  size_t samples = a.u64("samples", 5, 0, 1000);
  bool json = a.flag("json");
  a.finish();
  if (spec.empty()) throw error(errc::usage, "pmindex keys: --dataset is required (" + bench::dataset_names() + ")");
  auto u = bench::parse_universe(uni);
  if (!u) throw error(errc::usage, "unknown --universe '" + uni + "' (dense, sparse, clustered, hashed)");
  auto d = bench::make_dataset(spec, seed, *u);
  auto s = bench::measure_keys(*d, seed, n, samples);
  if (json) std::fputs(bench::to_json(s).dump().c_str(), stdout);
  else std::fputs(bench::to_text(s).c_str(), stdout);
  if (s.duplicates) {
    std::fprintf(stderr, "pmindex keys: %s gave equal keys to distinct ids (a generator bug)\n", spec.c_str());
    return static_cast<int>(errc::failure);
  }
  return 0;
}

}  // namespace pmindex::cli

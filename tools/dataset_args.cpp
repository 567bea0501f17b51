#include "dataset_args.hpp"

#include "crash/crashtest.hpp"
#include "pmindex/error.hpp"

namespace pmindex::cli {

std::string data_options::describe() const {
  std::string s;
  if (ds) s = "--dataset " + ds->name();
  if (value_size != 8) s += (s.empty() ? "" : " ") + std::string("--value-size ") + std::to_string(value_size);
  return s;
}

data_options read_data_options(args& a, uint64_t seed) {
  data_options d;
  std::string name = a.str("dataset", "");
  d.value_size = a.u64("value-size", 8, 0, uint64_t{1} << 30);
  if (!name.empty()) d.ds = bench::make_dataset(name, seed, bench::key_universe::sparse, /*quiet=*/true);
  d.bytes = (d.ds && !d.ds->integer_keys()) || d.value_size != 8;
  return d;
}

void prepare_byte_run(options& o, const data_options& d) {
  if (!d.bytes) return;
  auto e = find_index(o.index);
  if (!e) throw error(errc::usage, "unknown index '" + o.index + "' (see `pmindex list`)");
  o.params = crash::byte_run_params(*e, o.params, d.value_size, d.describe());
}

}  // namespace pmindex::cli

// stdmap baseline: std::map behind a shared mutex (see baseline.hpp).
#include <map>

#include "baseline/baseline.hpp"
#include "builtin_indexes.hpp"

namespace pmindex::baseline {
namespace {
index_entry make_stdmap() {
  return make_baseline_entry<std::map>("stdmap", "baseline: std::map + shared mutex (volatile, dram mode)");
}
}  // namespace
}  // namespace pmindex::baseline

namespace pmindex::builtin {
index_entry stdmap_entry() { return pmindex::baseline::make_stdmap(); }
}  // namespace pmindex::builtin

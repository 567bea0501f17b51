// stdmap baseline: std::map behind a shared mutex (see baseline.hpp).
#include <map>

#include "baseline/baseline.hpp"

namespace pmindex::baseline {
namespace {
index_entry make_entry() {
  return make_baseline_entry<std::map>("stdmap", "baseline: std::map + shared mutex (volatile, dram mode)");
}
}  // namespace
PMINDEX_REGISTER_INDEX(make_entry);
}  // namespace pmindex::baseline

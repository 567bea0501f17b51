// btree-dram baseline: abseil's btree_map behind a shared mutex (see
// baseline.hpp). Compiled to nothing when abseil was not found.
#ifdef PMINDEX_HAVE_ABSL
#include <absl/container/btree_map.h>

#include "baseline/baseline.hpp"

namespace pmindex::baseline {
namespace {
index_entry make_entry() {
  return make_baseline_entry<absl::btree_map>("btree-dram",
                                              "baseline: abseil btree_map + shared mutex (volatile, dram mode)");
}
}  // namespace
PMINDEX_REGISTER_INDEX(make_entry);
}  // namespace pmindex::baseline
#endif

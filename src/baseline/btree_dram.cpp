// btree-dram baseline: abseil's btree_map behind a shared mutex (see
// baseline.hpp). Compiled to nothing when abseil was not found.
#ifdef PMINDEX_HAVE_ABSL
#include <absl/container/btree_map.h>

#include "baseline/baseline.hpp"
#include "builtin_indexes.hpp"

namespace pmindex::baseline {
namespace {
index_entry make_btree_dram() {
  return make_baseline_entry<absl::btree_map>("btree-dram",
                                              "baseline: abseil btree_map + shared mutex (volatile, dram mode)");
}
}  // namespace
}  // namespace pmindex::baseline

namespace pmindex::builtin {
index_entry btree_dram_entry() { return pmindex::baseline::make_btree_dram(); }
}  // namespace pmindex::builtin
#endif

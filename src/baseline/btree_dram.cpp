// btree-dram baseline: abseil's btree_map behind a shared mutex (see
// baseline.hpp). Compiled to nothing when abseil was not found.
#ifdef PMINDEX_HAVE_ABSL
#include <absl/container/btree_map.h>

#include "baseline/locked_map.hpp"
#include "pmindex/baseline/baseline.hpp"

namespace pmindex::baseline {

namespace {
template <class A>
using absl_btree_of = absl::btree_map<uint64_t, uint64_t, std::less<uint64_t>, A>;
}

index_entry make_btree_dram_entry() {
  index_entry e;
  e.name = "btree-dram";
  e.description = "baseline: abseil btree_map + shared mutex (volatile, dram mode)";
  e.concurrent = true;
  e.modes = {pm::mode::dram};
  e.factory = [](pm::pool& p, open_kind) -> std::unique_ptr<index> {
    return std::make_unique<detail::locked_map_index<absl_btree_of>>(p);
  };
  return e;
}

}  // namespace pmindex::baseline
#endif

// stdmap baseline: std::map behind a shared mutex (see baseline.hpp).
#include <map>

#include "baseline/locked_map.hpp"
#include "pmindex/baseline/baseline.hpp"

namespace pmindex::baseline {

namespace {
template <class A>
using std_map_of = std::map<uint64_t, uint64_t, std::less<uint64_t>, A>;
}

index_entry make_stdmap_entry() {
  index_entry e;
  e.name = "stdmap";
  e.description = "baseline: std::map + shared mutex (volatile, dram mode)";
  e.concurrent = true;
  e.modes = {pm::mode::dram};
  e.factory = [](pm::pool& p, open_kind) -> std::unique_ptr<index> {
    return std::make_unique<detail::locked_map_index<std_map_of>>(p);
  };
  return e;
}

void add_entries(std::vector<index_entry>& v) {
  v.push_back(make_stdmap_entry());
#ifdef PMINDEX_HAVE_ABSL
  v.push_back(make_btree_dram_entry());
#endif
}

}  // namespace pmindex::baseline

// tbb-map baseline: oneTBB's concurrent_map with a lock per entry (see
// tbb_map.hpp). Compiled to nothing when oneTBB was not found.
#ifdef PMINDEX_HAVE_TBB
#include "baseline/tbb_map.hpp"

#include "baseline/baseline.hpp"
#include "builtin_indexes.hpp"

namespace pmindex::baseline {
namespace {
index_entry make_tbb_map() {
  index_entry e = baseline_entry("tbb-map", "baseline: oneTBB concurrent_map (skip list) + a lock per entry "
                                            "(volatile, dram mode)");
  e.scan_guarantee =
      "sorted, no duplicates, per record and not a snapshot: each record returned held that value at some "
      "moment of the scan, a record present for the whole scan is returned, one inserted, updated or removed "
      "meanwhile may or may not be";
  e.factory = [](pm::pool& p, open_kind, const index_config& c) -> std::unique_ptr<index> {
    if (c.keys() == key_kind::u64) return std::make_unique<detail::tbb_u64_index>(p);
    return std::make_unique<detail::tbb_bytes_index>(p);
  };
  return e;
}
}  // namespace
}  // namespace pmindex::baseline

namespace pmindex::builtin {
index_entry tbb_map_entry() { return pmindex::baseline::make_tbb_map(); }
}  // namespace pmindex::builtin
#endif

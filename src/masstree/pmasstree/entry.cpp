// Registry entry of `pmasstree` (see pmasstree.hpp): one tree template, keys=u64
// (one 8-byte slice, values in the leaves) or keys=bytes (layers of slices,
// records in kv blocks).
#include "masstree/pmasstree/pmasstree.hpp"
#include "builtin_indexes.hpp"

namespace pmindex::masstree::pmasstree {
namespace {

index_entry make_entry() {
  index_entry e{
      .name = "pmasstree",
      .family = "masstree",
      .description =
          "P-Masstree: a trie of B+-trees per 8-byte key slice, B-link leaves committed by a permutation "
          "word",
      .paper = "RECIPE (SOSP'19), Masstree (EuroSys'12)",
      .concurrent = true,  // leaf locks, optimistic readers; inner-node copies serialized
      .modes = {pm::mode::dram, pm::mode::volatile_, pm::mode::persist, pm::mode::eadr},
      .key_kinds = {key_kind::u64, key_kind::bytes},
      .max_key = tree<true>::k_max_key,
      .max_value = tree<true>::k_max_value,
      .scan_guarantee =
          "sorted, no duplicates; each leaf read as one validated snapshot; a record present for the "
          "whole scan is returned",
      .params = {{"leaf",
                  "entries per leaf before it splits (tests: small, so short histories split)",
                  "15",
                  {},
                  2,
                  k_width},
                 {"inner",
                  "children per inner node (tests: small, so inner nodes split and layers grow roots)",
                  "16",
                  {},
                  3,
                  k_width + 1}},
  };
  e.factory = [](pm::pool& p, open_kind k, const index_config& c) -> std::unique_ptr<index> {
    if (c.keys() == key_kind::bytes) return std::make_unique<tree<true>>(p, k, c);
    return std::make_unique<tree<false>>(p, k, c);
  };
  return e;
}

}  // namespace
}  // namespace pmindex::masstree::pmasstree

namespace pmindex::builtin {
index_entry pmasstree_entry() { return pmindex::masstree::pmasstree::make_entry(); }
}  // namespace pmindex::builtin

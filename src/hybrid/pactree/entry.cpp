// Registry entry of `pactree` (see pactree.hpp): one tree template over the
// two key policies of btree/detail/keys.hpp.
#include "hybrid/pactree/pactree.hpp"
#include "builtin_indexes.hpp"

namespace pmindex::hybrid::pactree {
namespace {

index_entry make_entry() {
  index_entry e{
      .name = "pactree",
      .family = "hybrid",
      .description = "PACTree: PM data nodes in a linked list, a persistent radix search layer updated by a background SMO thread",
      .paper = "PACTree (SOSP'21)",
      .concurrent = true,  // optimistic version locks per node
      .modes = {pm::mode::dram, pm::mode::volatile_, pm::mode::persist, pm::mode::eadr},
      .key_kinds = {key_kind::u64, key_kind::bytes},
      .max_key = detail::byte_keys::k_max_key,
      .max_value = detail::byte_keys::k_max_value,
      .scan_guarantee = "scan=unsafe (default): sorted, each node one validated snapshot, a record present for the "
                        "whole scan is returned; scan=safe: an atomic snapshot (up to 3 optimistic tries validated at the "
                        "end, then one that locks the nodes it reads: writers cannot starve it)",
      .params = {{"node", "records per data node before it splits (tests: small, so short histories split and merge)",
                  "64", {}, 4, 64},
                 {"scan", "unsafe: per-node snapshots, as the original; safe: atomic (validated at the end; after 3 failed "
                          "tries, locks the nodes it reads)",
                  "unsafe", {"unsafe", "safe"}}},
  };
  e.factory = [](pm::pool& p, open_kind k, const index_config& c) -> std::unique_ptr<index> {
    if (c.keys() == key_kind::bytes) return std::make_unique<tree<detail::byte_keys>>(p, k, c);
    return std::make_unique<tree<detail::u64_keys>>(p, k, c);
  };
  return e;
}

}  // namespace
}  // namespace pmindex::hybrid::pactree

namespace pmindex::builtin {
index_entry pactree_entry() { return pmindex::hybrid::pactree::make_entry(); }
}  // namespace pmindex::builtin

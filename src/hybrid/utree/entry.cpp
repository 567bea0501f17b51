// Registry entry of `utree` (see utree.hpp): one tree template over the two
// key policies of btree/detail/keys.hpp.
#include "hybrid/utree/utree.hpp"
#include "builtin_indexes.hpp"

namespace pmindex::hybrid::utree {
namespace {

index_entry make_entry() {
  index_entry e{
      .name = "utree",
      .family = "hybrid",
      .description =
          "uTree: DRAM B+-tree leaves pointing into a persistent sorted linked list, one node per record",
      .paper = "uTree (VLDB'20)",
      .concurrent = true,  // optimistic version locks per DRAM leaf
      .modes = {pm::mode::dram, pm::mode::volatile_, pm::mode::persist, pm::mode::eadr},
      .key_kinds = {key_kind::u64, key_kind::bytes},
      .max_key = detail::byte_keys::k_max_key,
      .max_value = detail::byte_keys::k_max_value,
      .scan_guarantee =
          "a walk of the persistent list: sorted, no duplicates, each record durable when read, a "
          "record present for the whole scan is returned; not atomic",
      .params = {{"leaf",
                  "entries per DRAM leaf (tests: small, so short histories split and unlink leaves)",
                  "32",
                  {},
                  4,
                  64}},
  };
  e.factory = [](pm::pool& p, open_kind k, const index_config& c) -> std::unique_ptr<index> {
    if (c.keys() == key_kind::bytes) return std::make_unique<tree<detail::byte_keys>>(p, k, c);
    return std::make_unique<tree<detail::u64_keys>>(p, k, c);
  };
  return e;
}

}  // namespace
}  // namespace pmindex::hybrid::utree

namespace pmindex::builtin {
index_entry utree_entry() { return pmindex::hybrid::utree::make_entry(); }
}  // namespace pmindex::builtin

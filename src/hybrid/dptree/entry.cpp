// Registry entry of `dptree` (see dptree.hpp): one tree template over the
// two key policies of btree/detail/keys.hpp.
#include "hybrid/dptree/dptree.hpp"
#include "builtin_indexes.hpp"

namespace pmindex::hybrid::dptree {
namespace {

index_entry make_entry() {
  index_entry e{
      .name = "dptree",
      .family = "hybrid",
      .description =
          "DPTree: DRAM buffer tree + PM write-ahead log, merged in the background into PM leaves with "
          "two metadata copies and a global version",
      .paper = "DPTree (VLDB'20)",
      .concurrent = true,  // writers of different log stripes in parallel (see dptree.hpp, "THREADS")
      .modes = {pm::mode::dram, pm::mode::volatile_, pm::mode::persist, pm::mode::eadr},
      .key_kinds = {key_kind::u64, key_kind::bytes},
      .max_key = detail::byte_keys::k_max_key,
      .max_value = detail::byte_keys::k_max_value,
      .scan_guarantee =
          "atomic snapshot (buffers and base read inside the structure lock, holding the active buffer's "
          "map lock)",
      .params = {{"leaf", "records per base leaf (tests: small, so merges split leaves)", "256", {}, 4, 256},
                 {"merge_min",
                  "buffer entries that start a merge however small the base (tests: small)",
                  "1024",
                  {},
                  1,
                  uint64_t{1} << 30},
                 {"merge_permille",
                  "a merge starts when the buffer holds this many entries per 1000 base records "
                  "(the original: 70)",
                  "70",
                  {},
                  1,
                  1000},
                 {"fail_leaves",
                  "tests: every n-th new leaf a merge asks for is refused as if the pool were full, so "
                  "merges take the partial path (0: never)",
                  "0",
                  {},
                  0,
                  uint64_t{1} << 30}},
  };
  e.factory = [](pm::pool& p, open_kind k, const index_config& c) -> std::unique_ptr<index> {
    if (c.keys() == key_kind::bytes) return std::make_unique<tree<detail::byte_keys>>(p, k, c);
    return std::make_unique<tree<detail::u64_keys>>(p, k, c);
  };
  return e;
}

}  // namespace
}  // namespace pmindex::hybrid::dptree

namespace pmindex::builtin {
index_entry dptree_entry() { return pmindex::hybrid::dptree::make_entry(); }
}  // namespace pmindex::builtin

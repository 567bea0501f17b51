// Registry entry of `canary` (see canary.hpp for the design).
#include "basic/canary/canary.hpp"
#include "basic/canary/node.hpp"
#include "builtin_indexes.hpp"

namespace pmindex::basic::canary {
namespace {

index_entry make_entry() {
  index_entry e;
  e.name = "canary";
  e.family = "basic";
  e.description = "persistent sorted skip list (substrate and crash-checker canary)";
  e.concurrent = true;
  e.modes = {pm::mode::dram, pm::mode::volatile_, pm::mode::persist, pm::mode::eadr};
  e.key_kinds = {key_kind::u64, key_kind::bytes};
  e.max_key = detail::k_bytes_max_key;
  e.max_value = detail::k_bytes_max_value;
  e.scan_guarantee =
      "sorted, no duplicates, every key >= from; each record returned was present at some moment during the scan, "
      "and every key present for the whole scan is returned";
  e.factory = [](pm::pool& p, open_kind k, const index_config& c) {
    return c.keys() == key_kind::bytes ? make_canary_bytes(p, k, c) : make_canary(p, k, c);
  };
  return e;
}

}  // namespace
}  // namespace pmindex::basic::canary

namespace pmindex::builtin {
index_entry canary_entry() { return pmindex::basic::canary::make_entry(); }
}  // namespace pmindex::builtin

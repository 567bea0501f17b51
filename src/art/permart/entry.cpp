// Registry entries of `permart` and `permart-2log` (see permart.hpp).
#include "art/permart/permart.hpp"
#include "art/permart/bytes_tree.hpp"
#include "art/permart/tree.hpp"
#include "builtin_indexes.hpp"

namespace pmindex::art::permart {
namespace {

index_entry make_entry(bool log) {
  index_entry e;
  e.name = log ? "permart-2log" : "permart";
  e.family = "art";
  e.description = log ? "PermART (2-Log): two in-node log entries per big leaf (one fence per logged update)"
                      : "PermART: persistent multiversion ART, ROWEX, linearizable range queries";
  e.paper = "ART That Lasts (SIGMOD'26)";
  e.concurrent = true;
  e.modes = {pm::mode::dram, pm::mode::volatile_, pm::mode::persist, pm::mode::eadr};
  e.key_kinds = {key_kind::u64, key_kind::bytes};
  e.max_key = k_max_key;
  e.max_value = k_max_value;
  e.scan_guarantee = "atomic snapshot (linearizable range queries over versioned pointers)";
  e.factory = [log](pm::pool& p, open_kind k, const index_config& c) -> std::unique_ptr<index> {
    if (c.keys() == key_kind::bytes) return std::make_unique<detail::bytes_tree>(p, k, c, log);
    return std::make_unique<detail::tree>(p, k, c, log);
  };
  return e;
}
index_entry make_permart() { return make_entry(false); }
index_entry make_permart_2log() { return make_entry(true); }

}  // namespace
}  // namespace pmindex::art::permart

namespace pmindex::builtin {
index_entry permart_entry() { return pmindex::art::permart::make_permart(); }
index_entry permart_2log_entry() { return pmindex::art::permart::make_permart_2log(); }
}  // namespace pmindex::builtin

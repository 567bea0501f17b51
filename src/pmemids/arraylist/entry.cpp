// Registry entry of the pmemids `arraylist` (see arraylist.hpp).
#include "pmemids/arraylist/arraylist.hpp"
#include "pmemids/detail/entry.hpp"
#include "builtin_indexes.hpp"

namespace pmindex::pmemids::arraylist {
namespace {

index_entry make_entry() {
  index_entry e = ordered_entry<array>(
      "arraylist",
      "pmemids array list: one fixed array of 128-byte items, key = slot number (0..capacity-1; persist: meta word "
      "commits, two-copy values)",
      k_max_value, false);
  e.max_key = 8;  // keys=bytes: the 8 bytes of a slot number
  e.params = {{"capacity", "items in the array (keys 0..capacity-1), fixed at creation",
               std::to_string(k_default_capacity), {}, 1, uint64_t{1} << 32}};
  e.key_limit = [](const index_config& c) { return c.u64("capacity"); };
  e.scan_guarantee = "sorted (slot order), no duplicates, every key >= from; single-threaded (the harness runs it behind one lock), so a scan sees exactly the "
                     "records present when it runs";
  return e;
}

}  // namespace
}  // namespace pmindex::pmemids::arraylist

namespace pmindex::builtin {
index_entry arraylist_entry() { return pmindex::pmemids::arraylist::make_entry(); }
}  // namespace pmindex::builtin

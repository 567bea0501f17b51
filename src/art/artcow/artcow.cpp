// Registration of artcow (see include/pmindex/art/artcow/artcow.hpp); the tree is the
// shared core in include/pmindex/art/detail/tree.hpp.
#include "pmindex/art/artcow/artcow.hpp"

#include "pmindex/art/detail/tree.hpp"

namespace pmindex::art::artcow {

namespace {
struct policy {
  static constexpr const char* k_name = "artcow";
  static constexpr unsigned k_span = 8;
  static constexpr bool k_adaptive = true;
  static constexpr bool k_cow_small = true;
  static constexpr bool k_cow_split = true;
  static constexpr uint64_t k_magic = 0x574f432b5452412dull;
};
}  // namespace

index_entry make_entry() {
  index_entry e;
  e.name = "artcow";
  e.description = "ART with copy-on-write Node4/16 and splits (FAST'17)";
  e.concurrent = true;  // one reader-writer lock
  e.modes = {pm::mode::dram, pm::mode::volatile_, pm::mode::persist, pm::mode::eadr};
  e.factory = [](pm::pool& p, open_kind k) -> std::unique_ptr<index> {
    return std::make_unique<detail::art_index<policy>>(p, k);
  };
  return e;
}

}  // namespace pmindex::art::artcow

#include "builtin_indexes.hpp"

#include "pmindex/art/artcow/artcow.hpp"
#include "pmindex/art/permart/permart.hpp"
#include "pmindex/art/woart/woart.hpp"
#include "pmindex/art/wort/wort.hpp"
#include "pmindex/basic/canary/canary.hpp"
#include "pmindex/btree/fptree/fptree.hpp"
#include "pmindex/btree/lbtree/lbtree.hpp"
#include "pmindex/baseline/baseline.hpp"

namespace pmindex::detail {

// One line per index; keep in the order `pmindex list` shows them.
void add_builtin_indexes(std::vector<index_entry>& v) {
  v.push_back(canary::make_entry());
  baseline::add_entries(v);  // stdmap, btree-dram (volatile baselines)
  v.push_back(art::permart::make_entry());
  v.push_back(art::permart::make_entry_2log());
  v.push_back(art::wort::make_entry());
  v.push_back(art::woart::make_entry());
  v.push_back(art::artcow::make_entry());
  v.push_back(fptree::make_entry());
  v.push_back(lbtree::make_entry());
}

}  // namespace pmindex::detail

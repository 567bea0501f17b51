#include "builtin_indexes.hpp"

#include "pmindex/basic/canary/canary.hpp"

namespace pmindex::detail {

// One line per index; keep in the order `pmindex list` shows them.
void add_builtin_indexes(std::vector<index_entry>& v) {
  v.push_back(canary::make_entry());
}

}  // namespace pmindex::detail

// The indexes compiled into libpmindex; each index folder provides one
// make_<name>_entry() and is listed once in builtin_indexes.cpp.
#pragma once

#include <vector>

#include "pmindex/index.hpp"

namespace pmindex::detail {
void add_builtin_indexes(std::vector<index_entry>& v);
}

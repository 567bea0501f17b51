// `pmindex bench --preset pmemids`: the pmemids_bench study's grid (MSST'20)
// and its table. See docs/bench.md, "The pmemids grid".
#pragma once

#include <cstdio>
#include <vector>

#include "runner.hpp"

namespace pmindex::cli {

// Per structure and thread count: KTPS of the read and the write workload in
// every mode run, then the write workload's flushes / fences per operation
// in persist and tx mode; with repetitions, the medians of each cell.
void print_pmemids_table(FILE* f, const std::vector<bench::run_result>& rs);

}  // namespace pmindex::cli

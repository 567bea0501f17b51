// The `null` index: every operation returns at once (inserts and removes
// report "not done", lookups find nothing). Running the harness on it
// measures the harness itself: generation is outside the timed section, so
// what remains is the loop, one virtual call and the counters per operation.
// Registered by the `pmindex` command line (tools/cmd_bench.cpp), not by the
// core library, so index test suites never see it.
#pragma once

#include "pmindex/index.hpp"

namespace pmindex::bench {
index_entry make_null_entry();
// Registers the null index once (the `pmindex` command line, the server).
void register_null_index();
// True for an index that stores nothing by design (null): the runner does
// not count its refused inserts as failures.
bool discards_records(const index_entry& e) noexcept;
}

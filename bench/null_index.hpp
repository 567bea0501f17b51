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
}

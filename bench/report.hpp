// Writing results: the table users read first (stdout), the JSON file
// (--json, a context block then one object per run) and CSV (--csv, one row
// per run, the JSON's numbers flattened to columns).
#pragma once

#include <cstdio>
#include <string>
#include <utility>
#include <vector>

#include "json.hpp"
#include "runner.hpp"

namespace pmindex::bench {

json::value to_json(const run_result& r);
// The table: one row per run; with `detail`, per-operation rows and the
// space/recovery figures below it.
void print_table(FILE* f, const std::vector<run_result>& rs, bool detail);
std::string to_csv(const std::vector<json::value>& runs);

// Every number of a JSON value as (dotted path, value); arrays of numbers are
// skipped (time series), arrays of objects indexed as [i].
void flatten(const json::value& v, const std::string& prefix, std::vector<std::pair<std::string, double>>& out);
// The identity of a run in a result file: "index workload mode parallel tN",
// then the dataset unless u64 and "vB" for a value size other than 8.
std::string run_key(const json::value& run);

}  // namespace pmindex::bench

// Repetitions (`pmindex bench --repetitions R`): the order the cells run in,
// and the statistics of a cell's repeated runs, for the table, the JSON's
// "aggregates" and `pmindex compare`.
//
// A cell is one row of the plan: index x workload x mode x threads (with
// --same-index, the workloads of one index run as phases of one cell). Every
// cell runs once per repetition, interleaved: repetition r runs the cells
// starting at cell r mod n and wrapping around, so a slow spell of a shared
// machine falls on different cells in different repetitions instead of on
// all repetitions of one cell, and no cell always runs first (cold caches,
// a fresh /dev/shm) or last.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "json.hpp"

namespace pmindex::bench {

// One run of the schedule: repetition `repetition` of cell `cell`.
struct slot {
  uint32_t repetition;
  size_t cell;
};

// Every (repetition, cell) of `repetitions` repetitions of `cells` cells in
// the order they run: repetition by repetition, repetition r starting at
// cell r mod cells. With one repetition: cells 0..n-1 in plan order.
std::vector<slot> interleaved_order(size_t cells, uint32_t repetitions);

// The aggregates google/benchmark reports for repetitions. stddev is the
// sample standard deviation (n - 1; 0 for a single value); cv = stddev /
// mean (0 when the mean is 0). The median of an even count is the mean of
// the two middle values.
struct summary {
  size_t n = 0;
  double median = 0, mean = 0, stddev = 0, cv = 0, min = 0, max = 0;
};
summary summarize(std::vector<double> values);

// "median" or, when the values spread, "median (min-max)", each number
// printed with `fmt` (a printf format for one double, e.g. "%.2f").
std::string median_and_spread(const summary& s, const char* fmt);

// Figures of a run that are its configuration or its place in the
// schedule, not results: left out of the aggregates (and of `compare`
// unless they differ).
bool is_parameter(const std::string& dotted_path);

// The cell a run of a result file belongs to: its "cell" field, or for files
// written before repetitions its run_key() (one run per cell).
std::string cell_of(const json::value& run);

// Makes the "cell" of `runs` (as to_json() wrote them) unique per
// "cell_index": a cell whose key another cell of the plan already has (the
// same workload named twice) gets " #<cell_index>" appended.
void unique_cells(std::vector<json::value>& runs);

// The runs of a result file grouped by cell: (cell, indices into runs), in
// the order each cell first appears.
std::vector<std::pair<std::string, std::vector<size_t>>> group_by_cell(const std::vector<json::value>& runs);

// The "aggregates" array of a result file: per cell its identity (cell,
// cell_index, index, workload, mode, parallel, threads, dataset, value_size),
// "repetitions" (its run count) and "figures": for every number of its runs
// that is not a parameter (dotted path, as in the CSV) the summary as
// { median, mean, stddev, cv, min, max }.
json::value aggregates(const std::vector<json::value>& runs);

}  // namespace pmindex::bench

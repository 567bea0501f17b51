// Studies: one paper's evaluation as a declarative file (studies/NAME.toml)
// that `pmindex study run NAME` executes through `pmindex bench`, comparing
// what it measures with the paper's published figures and findings.
// docs/studies.md describes the file format; this header is the model the
// file is read into (study_file.cpp), the cells the runs produce and the
// evaluation of findings over them (study_eval.cpp).
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "json.hpp"

namespace pmindex::cli::study {

// The scales a study runs at: `smoke` (seconds, for the test suite),
// `default` (10M records), `paper` (the paper's sizes).
inline const std::vector<std::string> k_scales = {"smoke", "default", "paper"};

// An option's values, possibly per scale: `x = 5`, `x = [1, "all"]` or
// `x = { smoke = 1, paper = [1, 8] }`. Stored as text, as `pmindex bench`
// takes it ("10M", "0.5", "true").
struct scaled {
  std::map<std::string, std::vector<std::string>> by_scale;  // "" = every scale
  // The values at `scale` (falling back to the scale-free ones), or none.
  std::vector<std::string> at(const std::string& scale) const;
};

// One `[[part.run]]`: a set of `pmindex bench` invocations. `indexes` and
// `workloads` go to one invocation as lists; every other list-valued option
// (threads, dataset, ...) is expanded, one invocation per combination.
struct run_spec {
  std::string part, name;
  std::string kind = "bench";  // "bench", or "serve" (a memcached load on `pmindex serve`)
  std::vector<std::string> indexes, workloads;
  // bench option (without "--") -> its values; a boolean is a bare flag
  // (`recover = true` -> --recover).
  std::vector<std::pair<std::string, scaled>> options;
  bool plugins = true;  // the study's [[plugin]]s run beside it
};

struct part_spec {
  std::string name, title, description;
};

// A published figure: the paper's values per index for one metric, and where
// our value comes from (a metric over the cells `where` selects, per index).
struct published_figure {
  std::string id, title, source, unit, metric, note;
  bool approximate = false;                  // read off a plot
  double factor = 1;                         // our metric x factor = the paper's unit
  std::string by = "index";                  // the label the values are keyed by
  std::map<std::string, std::string> where;  // cell labels every value's cell has
  std::vector<std::pair<std::string, double>> values;  // label value -> the paper's value
};

// A finding: a statement of the paper, checked against our medians.
//   ratio:   metric(a) / metric(b) in [lo, hi]
//   above:   metric(a) / metric(b) >= bound      below: <= bound
//   highest / lowest: `index` has the highest (lowest) median of `among` on
//            the metric, allowing `tolerance` (0.05: within 5% of the best
//            other counts as holding). `by` names the label ranked over
//            ("index" unless given: e.g. "mode" ranks modes).
struct finding_spec {
  std::string id, statement, source, kind, metric;
  std::map<std::string, std::string> where, a, b;  // a and b add to where
  std::string index, by = "index";
  std::vector<std::string> among;
  double lo = 0, hi = 0, bound = 0, tolerance = 0;
};

struct plugin_spec {
  std::string name, path, abi = "master";
};

struct study_spec {
  std::string name, title, paper, description, path;
  std::map<std::string, std::map<std::string, std::string>> scale_defaults;  // scale -> option -> value
  std::map<std::string, uint64_t> repetitions;                               // scale -> default R
  std::vector<part_spec> parts;
  std::vector<run_spec> runs;
  std::vector<published_figure> published;
  std::vector<finding_spec> findings;
  std::vector<plugin_spec> plugins;
};

// Reads and checks a study file. Any problem (TOML syntax, unknown key,
// missing index, unknown part or label) throws error(usage) naming the file
// and the key. `known_index` says whether an index name is registered.
study_spec load_study(const std::string& path, bool (*known_index)(const std::string&));
study_spec parse_study(const std::string& text, const std::string& path, bool (*known_index)(const std::string&));

// The labels that identify a cell (and that `where`, `a`, `b` may name).
inline const std::vector<std::string> k_labels = {
    "part",     "run",         "index",         "workload",    "threads",   "dataset",   "value_size",
    "mode",     "parallel",    "distribution",  "universe",    "scan_size", "records",   "range_threads",
    "selectivity", "pm_write_ns", "lock",       "plugin"};

// One cell: every repetition of one configuration.
struct cell {
  std::map<std::string, std::string> labels;
  std::vector<const bench::json::value*> runs;  // the bench `results` entries
};

// Groups bench results (each tagged with "part" and "run") into cells by
// their labels, whatever the order and whether or not the file carries
// aggregates.
std::vector<cell> group_cells(const std::vector<bench::json::value>& results);
std::map<std::string, std::string> labels_of(const bench::json::value& result);

// A metric's median, least and greatest over a cell's runs (dotted path into
// a result: "run.mops", "ops.read.latency_ns.p99", "space.pm_bytes_per_record").
struct stat {
  size_t n = 0;
  double median = 0, min = 0, max = 0;
};
bool metric_of(const bench::json::value& result, const std::string& path, double& out);
stat metric_stat(const cell& c, const std::string& path);

// The cells whose labels include every label of `sel`.
std::vector<const cell*> select(const std::vector<cell>& cells, const std::map<std::string, std::string>& sel);

struct verdict {
  std::string status;  // "held", "not held", "not comparable"
  double ratio = 0, ratio_min = 0, ratio_max = 0;  // measured, with its spread
  std::string detail;                              // what was compared, or why it could not be
};
verdict evaluate(const finding_spec& f, const std::vector<cell>& cells);

}  // namespace pmindex::cli::study

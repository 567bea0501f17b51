#include "repeat.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "report.hpp"

namespace pmindex::bench {

std::vector<slot> interleaved_order(size_t cells, uint32_t repetitions) {
  std::vector<slot> out;
  if (cells == 0) return out;
  out.reserve(cells * repetitions);
  for (uint32_t r = 0; r < repetitions; ++r)
    for (size_t i = 0; i < cells; ++i) out.push_back({r, (r + i) % cells});
  return out;
}

summary summarize(std::vector<double> v) {
  summary s;
  s.n = v.size();
  if (v.empty()) return s;
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  s.min = v.front();
  s.max = v.back();
  s.median = n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
  double sum = 0;
  for (double x : v) sum += x;
  s.mean = sum / static_cast<double>(n);
  if (n > 1) {
    double sq = 0;
    for (double x : v) sq += (x - s.mean) * (x - s.mean);
    s.stddev = std::sqrt(sq / static_cast<double>(n - 1));
  }
  s.cv = s.mean != 0 ? s.stddev / std::fabs(s.mean) : 0;
  return s;
}

std::string median_and_spread(const summary& s, const char* fmt) {
  auto one = [&](double x) {
    char b[48];
    std::snprintf(b, sizeof b, fmt, x);
    return std::string(b);
  };
  std::string m = one(s.median), lo = one(s.min), hi = one(s.max);
  // Equal once printed: no spread worth a column's width.
  if (s.n <= 1 || lo == hi) return m;
  return m + " (" + lo + "-" + hi + ")";
}

bool is_parameter(const std::string& p) {
  return p.rfind("workload_spec.", 0) == 0 || p == "threads" || p == "value_size" || p == "byte_path" ||
         p == "series.window_ms" || p == "repetition" || p == "cell_index";
}

std::string cell_of(const json::value& run) {
  auto* c = json::find(run, "cell");
  return c && c->is_string() ? json::str(*c) : run_key(run);
}

void unique_cells(std::vector<json::value>& runs) {
  std::vector<std::pair<std::string, double>> owner;  // key -> the cell_index that has it
  for (auto& r : runs) {
    auto* k = json::find(r, "cell");
    auto* i = json::find(r, "cell_index");
    if (!k || !k->is_string() || !i || !i->is_number()) continue;
    std::string key = json::str(*k);
    auto it = std::find_if(owner.begin(), owner.end(), [&](auto& o) { return o.first == key; });
    if (it == owner.end()) {
      owner.push_back({key, json::num(*i)});
    } else if (it->second != json::num(*i)) {
      key += " #" + std::to_string(static_cast<uint64_t>(json::num(*i)));
      r["cell"] = key;
    }
  }
}

std::vector<std::pair<std::string, std::vector<size_t>>> group_by_cell(const std::vector<json::value>& runs) {
  std::vector<std::pair<std::string, std::vector<size_t>>> out;
  for (size_t i = 0; i < runs.size(); ++i) {
    const std::string c = cell_of(runs[i]);
    auto it = std::find_if(out.begin(), out.end(), [&](auto& g) { return g.first == c; });
    if (it == out.end()) out.push_back({c, {i}});
    else it->second.push_back(i);
  }
  return out;
}

json::value aggregates(const std::vector<json::value>& runs) {
  auto arr = json::value::array();
  for (auto& [cell, idx] : group_by_cell(runs)) {
    const json::value& first = runs[idx.front()];
    auto a = json::value::object();
    a["cell"] = cell;
    for (const char* k : {"cell_index", "index", "plugin", "workload", "mode", "parallel", "threads", "dataset",
                          "value_size"})
      if (auto* x = json::find(first, k)) a[k] = *x;
    a["repetitions"] = static_cast<uint64_t>(idx.size());
    // Each dotted path in the order it first appears, with its values.
    std::vector<std::pair<std::string, std::vector<double>>> figs;
    for (size_t i : idx) {
      std::vector<std::pair<std::string, double>> flat;
      flatten(runs[i], "", flat);
      for (auto& [path, v] : flat) {
        if (is_parameter(path)) continue;
        auto it = std::find_if(figs.begin(), figs.end(), [&](auto& f) { return f.first == path; });
        if (it == figs.end()) figs.push_back({path, {v}});
        else it->second.push_back(v);
      }
    }
    auto f = json::value::object();
    for (auto& [path, vals] : figs) {
      const summary s = summarize(vals);
      auto x = json::value::object();
      x["median"] = s.median;
      x["mean"] = s.mean;
      x["stddev"] = s.stddev;
      x["cv"] = s.cv;
      x["min"] = s.min;
      x["max"] = s.max;
      if (s.n != idx.size()) x["runs"] = static_cast<uint64_t>(s.n);  // a figure some runs lack
      f[path] = x;
    }
    a["figures"] = f;
    arr.push_back(a);
  }
  return arr;
}

}  // namespace pmindex::bench

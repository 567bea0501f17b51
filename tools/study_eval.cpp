// Cells and findings of a study: bench results grouped by configuration
// (every repetition of one cell together), a metric's median and spread per
// cell, and each finding's verdict from those medians.
#include <algorithm>
#include <cmath>
#include <cstdio>

#include "study.hpp"

namespace pmindex::cli::study {

namespace json = bench::json;

std::vector<std::string> scaled::at(const std::string& scale) const {
  if (auto it = by_scale.find(scale); it != by_scale.end()) return it->second;
  if (auto it = by_scale.find(""); it != by_scale.end()) return it->second;
  return {};
}

namespace {

std::string text_of(const json::value& v) {
  if (v.is_string()) return json::str(v);
  if (v.is_number()) {
    char b[40];
    double d = json::num(v);
    if (d == std::floor(d) && std::fabs(d) < 1e15) std::snprintf(b, sizeof b, "%.0f", d);
    else std::snprintf(b, sizeof b, "%g", d);
    return b;
  }
  if (v.is_boolean()) return json::boolean(v) ? "true" : "false";
  return "";
}

double median_of(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  size_t n = v.size();
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

std::string fmt(double v) {
  char b[40];
  std::snprintf(b, sizeof b, "%.3g", v);
  return b;
}

std::string describe(const std::map<std::string, std::string>& sel) {
  std::string s;
  for (auto& [k, v] : sel) s += (s.empty() ? "" : " ") + k + "=" + v;
  return s;
}

// The one cell `sel` names, or nullptr with the reason.
const cell* one_cell(const std::vector<cell>& cells, const std::map<std::string, std::string>& sel,
                     std::string& why) {
  auto found = select(cells, sel);
  if (found.size() == 1) return found[0];
  why = found.empty() ? "no measured cell has " + describe(sel)
                      : std::to_string(found.size()) + " cells match " + describe(sel) + " (name one)";
  return nullptr;
}

std::map<std::string, std::string> merged(std::map<std::string, std::string> base,
                                          const std::map<std::string, std::string>& more) {
  for (auto& [k, v] : more) base[k] = v;
  return base;
}

verdict not_comparable(std::string why) {
  verdict v;
  v.status = "not comparable";
  v.detail = std::move(why);
  return v;
}

verdict ratio_finding(const finding_spec& f, const std::vector<cell>& cells) {
  std::string why;
  auto sa = merged(f.where, f.a), sb = merged(f.where, f.b);
  const cell* a = one_cell(cells, sa, why);
  if (!a) return not_comparable(why);
  const cell* b = one_cell(cells, sb, why);
  if (!b) return not_comparable(why);
  stat x = metric_stat(*a, f.metric), y = metric_stat(*b, f.metric);
  if (!x.n || !y.n) return not_comparable("no " + f.metric + " in " + describe(x.n ? sb : sa));
  if (y.median <= 0 || y.min <= 0) return not_comparable(f.metric + " is 0 in " + describe(sb));
  verdict v;
  v.ratio = x.median / y.median;
  v.ratio_min = x.min / y.max;
  v.ratio_max = x.max / y.min;
  bool held = f.kind == "ratio"   ? v.ratio >= f.lo && v.ratio <= f.hi
              : f.kind == "above" ? v.ratio >= f.bound
                                  : v.ratio <= f.bound;
  v.status = held ? "held" : "not held";
  v.detail = f.metric + ": " + fmt(x.median) + " / " + fmt(y.median) + " (" + std::to_string(x.n) + " and " +
             std::to_string(y.n) + " runs)";
  return v;
}

verdict rank_finding(const finding_spec& f, const std::vector<cell>& cells) {
  const bool highest = f.kind == "highest";
  std::string why;
  const cell* me = one_cell(cells, merged(f.where, {{f.by, f.index}}), why);
  if (!me) return not_comparable(why);
  stat mine = metric_stat(*me, f.metric);
  if (!mine.n) return not_comparable("no " + f.metric + " for " + f.index);
  // The best of the others: their medians decide, their spread goes along.
  bool any = false;
  stat best;
  std::string best_name, missing;
  for (auto& other : f.among) {
    if (other == f.index) continue;
    auto found = select(cells, merged(f.where, {{f.by, other}}));
    if (found.size() != 1) {
      missing += (missing.empty() ? "" : ", ") + other;
      continue;
    }
    stat s = metric_stat(*found[0], f.metric);
    if (!s.n) {
      missing += (missing.empty() ? "" : ", ") + other;
      continue;
    }
    if (!any || (highest ? s.median > best.median : s.median < best.median)) {
      best = s;
      best_name = other;
      any = true;
    }
  }
  if (!any) return not_comparable("none of the others was measured");
  if (best.median <= 0 || best.min <= 0) return not_comparable(f.metric + " of " + best_name + " is 0");
  verdict v;
  v.ratio = mine.median / best.median;
  v.ratio_min = mine.min / best.max;
  v.ratio_max = mine.max / best.min;
  bool held = highest ? v.ratio >= 1 - f.tolerance : v.ratio <= 1 + f.tolerance;
  v.status = held ? "held" : "not held";
  v.detail = f.index + " " + fmt(mine.median) + " vs the " + (highest ? "highest" : "lowest") + " other, " +
             best_name + " " + fmt(best.median) + " (" + f.metric + ")";
  if (!missing.empty()) v.detail += "; not measured: " + missing;
  return v;
}

}  // namespace

std::map<std::string, std::string> labels_of(const json::value& r) {
  std::map<std::string, std::string> l;
  for (const char* k : {"index", "workload", "threads", "dataset", "value_size", "mode", "parallel"})
    if (auto* v = json::find(r, k)) l[k] = text_of(*v);
  if (auto* w = json::find(r, "workload_spec")) {
    if (auto* d = json::find(*w, "distribution")) l["distribution"] = text_of(*d);
    if (auto* n = json::find(*w, "records")) l["records"] = text_of(*n);
  }
  // The study's own labels (part, run, and the options as the study file
  // wrote them, e.g. threads = "all") take precedence.
  if (auto* s = json::find(r, "study"); s && s->is_object())
    for (auto& [k, v] : json::members(*s).items()) l[k] = text_of(v);
  return l;
}

std::vector<cell> group_cells(const std::vector<json::value>& results) {
  std::vector<cell> cells;
  std::map<std::map<std::string, std::string>, size_t> where;
  for (auto& r : results) {
    auto l = labels_of(r);
    auto [it, fresh] = where.emplace(l, cells.size());
    if (fresh) cells.push_back({l, {}});
    cells[it->second].runs.push_back(&r);
  }
  return cells;
}

bool metric_of(const json::value& r, const std::string& path, double& out) {
  const json::value* v = &r;
  size_t p = 0;
  // Path parts are split at dots, except that a latency percentile such as
  // "p99.9" keeps its dot: a part that is not found is retried joined with
  // the next one.
  std::string pending;
  while (p <= path.size()) {
    size_t e = path.find('.', p);
    if (e == std::string::npos) e = path.size();
    std::string part = pending.empty() ? path.substr(p, e - p) : pending + "." + path.substr(p, e - p);
    p = e + 1;
    const json::value* next = json::find(*v, part);
    if (next) {
      v = next;
      pending.clear();
    } else {
      pending = part;
    }
  }
  if (pending.empty() && v->is_number()) {
    out = json::num(*v);
    return std::isfinite(out);
  }
  // Figures a result implies without holding them: DRAM per record, and the
  // pool bytes per record the allocator reserved beyond the blocks in use.
  double a, b, n;
  if (path == "space.dram_bytes_per_record" && metric_of(r, "space.dram_bytes", a) &&
      metric_of(r, "space.records", n) && n > 0) {
    out = a / n;
    return true;
  }
  // The index's own DRAM and its pool allocator's, apart (results that
  // predate the split hold neither: not comparable).
  for (const char* part : {"index", "alloc"}) {
    const std::string name = std::string("space.") + part + "_dram_bytes";
    if (path == name + "_per_record" && metric_of(r, name, a) && metric_of(r, "space.records", n) && n > 0) {
      out = a / n;
      return true;
    }
  }
  if (path == "space.pm_overhead_per_record" && metric_of(r, "space.pm_bytes_reserved", a) &&
      metric_of(r, "space.pm_bytes_used", b) && metric_of(r, "space.records", n) && n > 0) {
    out = (a - b) / n;
    return true;
  }
  return false;
}

stat metric_stat(const cell& c, const std::string& path) {
  std::vector<double> xs;
  for (auto* r : c.runs) {
    double x;
    if (metric_of(*r, path, x)) xs.push_back(x);
  }
  stat s;
  s.n = xs.size();
  if (xs.empty()) return s;
  s.median = median_of(xs);
  s.min = *std::min_element(xs.begin(), xs.end());
  s.max = *std::max_element(xs.begin(), xs.end());
  return s;
}

std::vector<const cell*> select(const std::vector<cell>& cells, const std::map<std::string, std::string>& sel) {
  std::vector<const cell*> out;
  for (auto& c : cells) {
    bool ok = true;
    for (auto& [k, v] : sel) {
      auto it = c.labels.find(k);
      if (it == c.labels.end() || it->second != v) {
        ok = false;
        break;
      }
    }
    if (ok) out.push_back(&c);
  }
  return out;
}

verdict evaluate(const finding_spec& f, const std::vector<cell>& cells) {
  if (f.kind == "highest" || f.kind == "lowest") return rank_finding(f, cells);
  return ratio_finding(f, cells);
}

}  // namespace pmindex::cli::study

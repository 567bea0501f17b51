// pmindex compare A.json B.json: every figure of every run found in both
// files, side by side with the ratio B/A. Runs are matched by index,
// workload, mode, parallel mode and threads; parameters that are equal are
// left out (they are not results). Files with repetitions (pmindex bench
// --repetitions) are compared by each cell's median, with its spread
// (min-max) beside it and `~` where the difference is within that spread.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <sstream>

#include "commands.hpp"
#include "json.hpp"
#include "pmindex/error.hpp"
#include "repeat.hpp"
#include "report.hpp"

namespace pmindex::cli {

namespace json = bench::json;

namespace {

bench::json::value load(const std::string& path) {
  std::ifstream f(path);
  if (!f) throw error(errc::missing_file, "cannot read " + path);
  std::stringstream ss;
  ss << f.rdbuf();
  bench::json::value v;
  try {
    v = bench::json::parse(ss.str());
  } catch (const error& e) {
    throw error(errc::usage, path + ": " + e.what());
  }
  if (!v.is_object() || !json::find(v, "results") || !json::find(v, "results")->is_array())
    throw error(errc::usage, path + " is not a `pmindex bench --json` result file");
  return v;
}

std::string fmt(double v) {
  char b[32];
  if (v == std::floor(v) && std::fabs(v) < 1e12) std::snprintf(b, sizeof b, "%.0f", v);
  else std::snprintf(b, sizeof b, "%.4g", v);
  return b;
}

}  // namespace

int cmd_compare(args& a) {
  std::string pa = a.str("a", ""), pb = a.str("b", "");
  // Positional: pmindex compare A.json B.json (the args class only knows
  // --options, so the two paths come as --a/--b or from the verb's tokens).
  a.finish();
  if (pa.empty() || pb.empty()) throw error(errc::usage, "usage: pmindex compare A.json B.json");
  auto A = load(pa), B = load(pb);

  auto commit = [](const json::value& doc) {
    const json::value* c = json::find(doc, "context");
    const json::value* g = c ? json::find(*c, "git_commit") : nullptr;
    return g ? "  (" + json::str(*g) + ")" : std::string();
  };
  std::printf("A: %s%s\nB: %s%s\n", pa.c_str(), commit(A).c_str(), pb.c_str(), commit(B).c_str());

  // The runs of each file by cell: one run each, or a cell's repetitions
  // (pmindex bench --repetitions), compared by their medians.
  const auto& ra_all = json::items(*json::find(A, "results"));
  const auto& rb_all = json::items(*json::find(B, "results"));
  const auto ga = bench::group_by_cell(ra_all), gb = bench::group_by_cell(rb_all);
  bool repeated = false;
  for (auto* g : {&ga, &gb})
    for (auto& [c, idx] : *g) repeated |= idx.size() > 1;
  if (repeated)
    std::printf("medians (min-max) of each cell's repetitions; ~: B/A is within the spread of A or B (noise)\n");

  // Pair cells: same identity first, then same index and workload (another
  // mode, parallel mode or thread count), then what is left in file order.
  std::vector<int> pair_of(gb.size(), -1);
  std::vector<bool> used(ga.size(), false);
  auto first_a = [&](size_t i) -> const bench::json::value& { return ra_all[ga[i].second.front()]; };
  auto first_b = [&](size_t j) -> const bench::json::value& { return rb_all[gb[j].second.front()]; };
  auto short_key = [](const bench::json::value& r) {
    auto* i = json::find(r, "index");
    auto* w = json::find(r, "workload");
    return (i && i->is_string() ? json::str(*i) : "?") + " " + (w && w->is_string() ? json::str(*w) : "?");
  };
  for (int pass = 0; pass < 3; ++pass)
    for (size_t j = 0; j < gb.size(); ++j) {
      if (pair_of[j] >= 0) continue;
      for (size_t i = 0; i < ga.size(); ++i) {
        if (used[i]) continue;
        bool same = pass == 0   ? ga[i].first == gb[j].first
                    : pass == 1 ? short_key(first_a(i)) == short_key(first_b(j))
                                : true;
        if (!same) continue;
        pair_of[j] = static_cast<int>(i);
        used[i] = true;
        break;
      }
    }

  // Each figure of a group: its values over the group's runs, in the order
  // the figures first appear.
  using figures = std::vector<std::pair<std::string, std::vector<double>>>;
  auto collect = [](const std::vector<bench::json::value>& runs, const std::vector<size_t>& idx) {
    figures out;
    for (size_t i : idx) {
      std::vector<std::pair<std::string, double>> flat;
      bench::flatten(runs[i], "", flat);
      for (auto& [k, v] : flat) {
        if (k == "repetition" || k == "cell_index") continue;  // the schedule, not the run
        auto it = std::find_if(out.begin(), out.end(), [&](auto& f) { return f.first == k; });
        if (it == out.end()) out.push_back({k, {v}});
        else it->second.push_back(v);
      }
    }
    return out;
  };
  auto shown = [&](const bench::summary& s) {
    if (s.n <= 1 || s.min == s.max) return fmt(s.median);
    return fmt(s.median) + " (" + fmt(s.min) + "-" + fmt(s.max) + ")";
  };
  const int w = repeated ? 24 : 14;

  for (size_t j = 0; j < gb.size(); ++j) {
    const std::string& kb = gb[j].first;
    if (pair_of[j] < 0) {
      std::printf("\n%s: only in B\n", kb.c_str());
      continue;
    }
    const size_t i = static_cast<size_t>(pair_of[j]);
    const std::string& ka = ga[i].first;
    const size_t na = ga[i].second.size(), nb = gb[j].second.size();
    figures fa = collect(ra_all, ga[i].second), fb = collect(rb_all, gb[j].second);
    std::string reps = na > 1 || nb > 1 ? "  (" + std::to_string(na) + " vs " + std::to_string(nb) + " runs)" : "";
    if (ka == kb) std::printf("\n%s%s\n", kb.c_str(), reps.c_str());
    else std::printf("\nA: %s\nB: %s%s\n", ka.c_str(), kb.c_str(), reps.c_str());
    std::printf("  %-40s %*s %*s %9s\n", "figure", w, "A", w, "B", "B/A");
    for (auto& [k, vb_all] : fb) {
      const std::vector<double>* va_all = nullptr;
      for (auto& [ka2, x] : fa)
        if (ka2 == k) va_all = &x;
      const bench::summary sb = bench::summarize(vb_all);
      if (!va_all) {
        std::printf("  %-40s %*s %*s %9s\n", k.c_str(), w, "-", w, shown(sb).c_str(), "");
        continue;
      }
      const bench::summary sa = bench::summarize(*va_all);
      const double va = sa.median, vb = sb.median;
      if (bench::is_parameter(k) && sa.min == sb.min && sa.max == sb.max) continue;
      std::string ratio = vb == 0 ? "1" : "inf";
      if (va != 0) {
        char r[16];
        std::snprintf(r, sizeof r, "%.3f", vb / va);
        ratio = r;
      }
      // Noise: one side's median falls inside the other side's range.
      const bool noise = (sa.n > 1 || sb.n > 1) &&
                         ((vb >= sa.min && vb <= sa.max) || (va >= sb.min && va <= sb.max));
      std::printf("  %-40s %*s %*s %9s%s\n", k.c_str(), w, shown(sa).c_str(), w, shown(sb).c_str(), ratio.c_str(),
                  noise ? " ~" : "");
    }
  }
  for (size_t i = 0; i < ga.size(); ++i)
    if (!used[i]) std::printf("\n%s: only in A\n", ga[i].first.c_str());
  return 0;
}

}  // namespace pmindex::cli

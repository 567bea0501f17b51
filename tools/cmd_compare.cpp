// pmindex compare A.json B.json: every figure of every run found in both
// files, side by side with the ratio B/A. Runs are matched by index,
// workload, mode, parallel mode and threads; parameters that are equal are
// left out (they are not results).
#include <cmath>
#include <cstdio>
#include <fstream>
#include <sstream>

#include "commands.hpp"
#include "json.hpp"
#include "pmindex/error.hpp"
#include "report.hpp"

namespace pmindex::cli {

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
  if (!v.is_object() || !v.get("results") || !v.get("results")->is_array())
    throw error(errc::usage, path + " is not a `pmindex bench --json` result file");
  return v;
}

bool is_parameter(const std::string& path) {
  return path.rfind("workload_spec.", 0) == 0 || path == "threads" || path == "series.window_ms";
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

  std::printf("A: %s", pa.c_str());
  if (auto* c = A.get("context"); c && c->get("git_commit")) std::printf("  (%s)", c->get("git_commit")->str().c_str());
  std::printf("\nB: %s", pb.c_str());
  if (auto* c = B.get("context"); c && c->get("git_commit")) std::printf("  (%s)", c->get("git_commit")->str().c_str());
  std::printf("\n");

  // Pair runs: same identity first, then same index and workload (another
  // mode, parallel mode or thread count), then what is left in file order.
  const auto& ra_all = A.get("results")->items();
  const auto& rb_all = B.get("results")->items();
  std::vector<int> pair_of(rb_all.size(), -1);
  std::vector<bool> used(ra_all.size(), false);
  auto short_key = [](const bench::json::value& r) {
    auto* i = r.get("index");
    auto* w = r.get("workload");
    return (i && i->is_string() ? i->str() : "?") + " " + (w && w->is_string() ? w->str() : "?");
  };
  for (int pass = 0; pass < 3; ++pass)
    for (size_t j = 0; j < rb_all.size(); ++j) {
      if (pair_of[j] >= 0) continue;
      for (size_t i = 0; i < ra_all.size(); ++i) {
        if (used[i]) continue;
        bool same = pass == 0   ? bench::run_key(ra_all[i]) == bench::run_key(rb_all[j])
                    : pass == 1 ? short_key(ra_all[i]) == short_key(rb_all[j])
                                : true;
        if (!same) continue;
        pair_of[j] = static_cast<int>(i);
        used[i] = true;
        break;
      }
    }

  for (size_t j = 0; j < rb_all.size(); ++j) {
    const auto& rb = rb_all[j];
    std::string kb = bench::run_key(rb);
    if (pair_of[j] < 0) {
      std::printf("\n%s: only in B\n", kb.c_str());
      continue;
    }
    const auto& ra = ra_all[static_cast<size_t>(pair_of[j])];
    std::string ka = bench::run_key(ra);
    std::vector<std::pair<std::string, double>> fa, fb;
    bench::flatten(ra, "", fa);
    bench::flatten(rb, "", fb);
    if (ka == kb) std::printf("\n%s\n", kb.c_str());
    else std::printf("\nA: %s\nB: %s\n", ka.c_str(), kb.c_str());
    std::printf("  %-40s %14s %14s %9s\n", "figure", "A", "B", "B/A");
    for (auto& [k, vb] : fb) {
      const double* va = nullptr;
      for (auto& [ka2, x] : fa)
        if (ka2 == k) va = &x;
      if (!va) {
        std::printf("  %-40s %14s %14s %9s\n", k.c_str(), "-", fmt(vb).c_str(), "");
        continue;
      }
      if (is_parameter(k) && *va == vb) continue;
      std::string ratio = vb == 0 ? "1" : "inf";
      if (*va != 0) {
        char r[16];
        std::snprintf(r, sizeof r, "%.3f", vb / *va);
        ratio = r;
      }
      std::printf("  %-40s %14s %14s %9s\n", k.c_str(), fmt(*va).c_str(), fmt(vb).c_str(), ratio.c_str());
    }
  }
  for (size_t i = 0; i < ra_all.size(); ++i)
    if (!used[i]) std::printf("\n%s: only in A\n", bench::run_key(ra_all[i]).c_str());
  return 0;
}

}  // namespace pmindex::cli

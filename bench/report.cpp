#include "report.hpp"

#include "repeat.hpp"

#include <algorithm>
#include <cctype>
#include <cinttypes>
#include <cmath>

namespace pmindex::bench {

namespace {
constexpr double k_quantiles[] = {0.5, 0.9, 0.99, 0.999, 0.9999, 0.99999};
constexpr const char* k_qnames[] = {"p50", "p90", "p99", "p99.9", "p99.99", "p99.999"};

double per(uint64_t a, uint64_t n) { return n ? static_cast<double>(a) / static_cast<double>(n) : 0; }

json::value latency_json(const histogram& h) {
  auto l = json::value::object();
  l["samples"] = h.count();
  l["min"] = h.min();
  for (size_t i = 0; i < std::size(k_quantiles); ++i) l[k_qnames[i]] = h.percentile(k_quantiles[i]);
  l["max"] = h.max();
  l["mean"] = h.mean();
  return l;
}

std::string human_bytes(double b) {
  const char* u[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  int i = 0;
  while (b >= 1024 && i < 4) b /= 1024, ++i;
  char s[32];
  std::snprintf(s, sizeof s, i ? "%.1f %s" : "%.0f %s", b, u[i]);
  return s;
}
}  // namespace

json::value to_json(const run_result& r) {
  const auto& c = r.cfg;
  auto j = json::value::object();
  j["index"] = r.label;
  if (!c.plugin.empty()) j["plugin"] = c.plugin;
  j["workload"] = c.w.name;
  j["mode"] = c.plugin.empty() ? std::string(pm::to_string(c.base.mode.value_or(pm::mode::persist)))
                                 : std::string("plugin");
  j["parallel"] = std::string(to_string(c.parallel));
  j["threads"] = c.threads;
  j["dataset"] = c.dataset;
  j["value_size"] = c.value_size;
  j["byte_path"] = c.byte_path();
  // Its cell (the identity the repetitions of one configuration share) and
  // its repetition; cmd_bench makes "cell" unique when two cells of a plan
  // would share a key.
  j["cell"] = run_key(j);
  j["cell_index"] = static_cast<uint64_t>(r.cell);
  j["repetition"] = r.repetition;
  auto w = json::value::object();
  w["mix"] = mix_string(c.w);
  w["distribution"] = std::string(to_string(c.w.dist));
  if (c.w.dist == distribution::selfsimilar) w["skew"] = c.w.skew;
  if (c.w.dist == distribution::zipfian || c.w.dist == distribution::latest) w["theta"] = c.w.theta;
  w["scan_size"] = c.w.scan_size;
  w["scan_uniform"] = c.w.scan_uniform;
  w["records"] = c.records;
  w["records_requested"] = c.records_requested.empty() ? std::to_string(c.records) : c.records_requested;
  w["key_space"] = c.key_space ? c.key_space : c.records;
  w["universe"] = std::string(to_string(c.universe));
  w["ops"] = c.ops;
  w["seconds"] = c.ops ? 0.0 : c.seconds;
  w["seed"] = c.seed;
  w["latency_sample_every"] = c.sample_every;
  j["workload_spec"] = w;

  auto load = json::value::object();
  load["seconds"] = r.load_seconds;
  load["records"] = r.load_ok;
  load["mops"] = r.load_seconds > 0 ? static_cast<double>(r.load_ok) / r.load_seconds / 1e6 : 0.0;
  load["busy_seconds"] = r.load_busy_seconds;
  load["flushes_per_insert"] = per(r.load_flushes, r.load_ok);
  load["fences_per_insert"] = per(r.load_fences, r.load_ok);
  load["allocs_per_insert"] = per(r.load_allocs, r.load_ok);
  load["setup_seconds"] = r.setup_seconds;
  j["load"] = load;

  if (r.have_space) {
    auto sp = json::value::object();
    sp["records"] = r.space.records;
    sp["pm_bytes_used"] = r.space.pm_bytes_used;
    sp["pm_bytes_reserved"] = r.space.pm_bytes_reserved;
    sp["dram_bytes"] = r.space.dram_bytes;
    // The index's own DRAM (what papers count) and the pool allocator's.
    sp["alloc_dram_bytes"] = r.space.alloc_dram_bytes;
    sp["index_dram_bytes"] = r.space.dram_bytes - std::min(r.space.alloc_dram_bytes, r.space.dram_bytes);
    sp["bytes_per_record"] = per(r.space.pm_bytes_used + r.space.dram_bytes, r.space.records);
    sp["pm_bytes_per_record"] = per(r.space.pm_bytes_used, r.space.records);
    for (auto& [k, v] : r.space.extra) sp[k] = v;
    j["space"] = sp;
  }

  auto run = json::value::object();
  run["wall_seconds"] = r.wall_seconds;
  run["busy_seconds"] = r.busy_seconds;
  run["ops"] = r.all.done;
  run["succeeded"] = r.all.ok;
  run["mops"] = r.mops;
  run["mops_succeeded"] = r.mops_ok;
  run["mops_per_thread"] = c.threads ? r.mops / c.threads : 0.0;
  run["cpu_seconds"] = r.cpu_seconds;
  run["mops_cpu"] = r.mops_cpu;
  run["flushes_per_op"] = per(r.all.flushes, r.all.done);
  run["fences_per_op"] = per(r.all.fences, r.all.done);
  run["allocs_per_op"] = per(r.all.allocs, r.all.done);
  run["latency_ns"] = latency_json(r.all.lat);
  if (r.key_compares_per_op >= 0) run["key_compares_per_op"] = r.key_compares_per_op;
  j["run"] = run;

  auto ops = json::value::object();
  for (unsigned i = 0; i < k_nops; ++i) {
    const auto& o = r.per_op[i];
    if (!o.done) continue;
    auto x = json::value::object();
    x["ops"] = o.done;
    x["succeeded"] = o.ok;
    // Per-type throughput: this type's share of the total rate.
    x["mops"] = r.all.done ? r.mops * per(o.done, r.all.done) : 0.0;
    x["mops_succeeded"] = r.all.done ? r.mops * per(o.ok, r.all.done) : 0.0;
    x["flushes_per_op"] = per(o.flushes, o.done);
    x["fences_per_op"] = per(o.fences, o.done);
    x["allocs_per_op"] = per(o.allocs, o.done);
    x["latency_ns"] = latency_json(o.lat);
    ops[std::string(to_string(static_cast<op_type>(i)))] = x;
  }
  j["ops"] = ops;

  auto series = json::value::object();
  series["window_ms"] = c.window_ms;
  auto arr = json::value::array();
  for (double m : r.series_mops) arr.push_back(m);
  series["mops"] = arr;
  j["series"] = series;

  auto chk = json::value::object();
  chk["ok"] = !r.failed;
  if (r.counted) {
    chk["expected_records"] = r.expected_records;
    chk["reported_records"] = r.reported_records;
    if (r.scanned) chk["scanned_records"] = r.scanned_records;
  }
  chk["bad_values"] = r.bad_values;
  chk["structure"] = r.structure;
  chk["seconds"] = r.check_seconds;
  if (r.failed) chk["failure"] = r.failure;
  j["check"] = chk;

  if (r.have_recovery) {
    auto rc = json::value::object();
    rc["clean_open_seconds"] = r.clean_open_seconds;
    rc["dirty_open_seconds"] = r.dirty_open_seconds;
    rc["dirty_recover_seconds"] = r.dirty_recover_seconds;
    rc["clean_open_cpu_seconds"] = r.clean_open_cpu_seconds;
    rc["dirty_open_cpu_seconds"] = r.dirty_open_cpu_seconds;
    rc["traced_blocks"] = r.dirty_traced_blocks;
    rc["records_after_recovery"] = r.records_after_recovery;
    auto st = json::value::object();
    for (auto& [k, v] : r.dirty_index_stats) st[k] = v;
    rc["index_stats_after_recovery"] = st;
    j["recovery"] = rc;
  }
  if (!r.notes.empty()) {
    auto n = json::value::array();
    for (auto& s : r.notes) n.push_back(s);
    j["notes"] = n;
  }
  return j;
}

void print_table(FILE* f, const std::vector<run_result>& rs, bool detail) {
  if (rs.empty()) return;
  const auto& c0 = rs.front().cfg;
  uint32_t reps = 1;
  for (auto& r : rs) reps = std::max(reps, r.repetition + 1);
  const std::string keys = c0.dataset == "u64" || c0.dataset == "u64-bytes"
                               ? std::string(to_string(c0.universe)) + " " + c0.dataset
                               : c0.dataset;
  std::string requested;
  if (!c0.records_requested.empty() && c0.records_requested != std::to_string(c0.records))
    requested = " (" + c0.records_requested +
                (std::isalpha(static_cast<unsigned char>(c0.records_requested.back())) ? ": K/M/G/T are powers of 1000)"
                                                                                       : ")");
  std::fprintf(f,
               "pmindex bench: %" PRIu64 " records prefilled%s, %s per run, %u thread%s (%s), %s keys, %u-byte values%s%s\n",
               c0.records, requested.c_str(),
               c0.ops ? (std::to_string(c0.ops) + " ops").c_str() : (std::to_string(c0.seconds) .substr(0, 4) + " s").c_str(),
               c0.threads, c0.threads == 1 ? "" : "s", std::string(to_string(c0.parallel)).c_str(), keys.c_str(),
               c0.value_size, c0.byte_path() ? " (byte calls)" : "",
               reps > 1 ? (", " + std::to_string(reps) + " repetitions: median (min-max)").c_str() : "");
  // Rows: one per cell and phase (a --same-index cell runs several), its
  // repetitions together, in plan order.
  std::vector<std::vector<const run_result*>> rows;
  {
    std::vector<std::pair<std::pair<size_t, size_t>, size_t>> where;  // (cell, phase) -> row
    std::vector<std::pair<std::pair<size_t, uint32_t>, size_t>> phases;  // (cell, repetition) -> runs so far
    for (auto& r : rs) {
      size_t phase = 0;
      auto p = std::find_if(phases.begin(), phases.end(),
                            [&](auto& x) { return x.first == std::make_pair(r.cell, r.repetition); });
      if (p == phases.end()) phases.push_back({{r.cell, r.repetition}, 1});
      else phase = p->second++;
      auto w = std::find_if(where.begin(), where.end(), [&](auto& x) { return x.first == std::make_pair(r.cell, phase); });
      if (w == where.end()) {
        where.push_back({{r.cell, phase}, rows.size()});
        rows.push_back({&r});
      } else {
        rows[w->second].push_back(&r);
      }
    }
    std::vector<size_t> order(rows.size());
    for (size_t i = 0; i < order.size(); ++i) order[i] = i;
    std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return where[a].first < where[b].first; });
    std::vector<std::vector<const run_result*>> sorted;
    for (size_t i : order) sorted.push_back(std::move(rows[i]));
    rows = std::move(sorted);
  }
  // The figures: each the median of a row's runs, with its spread when the
  // repetitions differ.
  struct column {
    const char* head;
    int width;
    const char* fmt;
    double (*get)(const run_result&);
  };
  static const column cols[] = {
      {"load s", 7, "%.2f", [](const run_result& r) { return r.load_seconds; }},
      {"Mops/s", 8, "%.2f", [](const run_result& r) { return r.mops; }},
      {"p50 ns", 8, "%.0f", [](const run_result& r) { return static_cast<double>(r.all.lat.percentile(0.5)); }},
      {"p99 ns", 8, "%.0f", [](const run_result& r) { return static_cast<double>(r.all.lat.percentile(0.99)); }},
      {"p99.9 ns", 8, "%.0f", [](const run_result& r) { return static_cast<double>(r.all.lat.percentile(0.999)); }},
      {"flush/op", 7, "%.2f", [](const run_result& r) { return per(r.all.flushes, r.all.done); }},
      {"fence/op", 7, "%.2f", [](const run_result& r) { return per(r.all.fences, r.all.done); }},
      {"alloc/op", 7, "%.2f", [](const run_result& r) { return per(r.all.allocs, r.all.done); }},
      {"B/record", 8, "%.1f",
       [](const run_result& r) { return per(r.space.pm_bytes_used + r.space.dram_bytes, r.space.records); }},
  };
  constexpr size_t ncols = std::size(cols);
  std::vector<std::vector<std::string>> text(rows.size());
  int width[ncols + 1];
  for (size_t c = 0; c < ncols; ++c) width[c] = cols[c].width;
  width[ncols] = 6;  // check
  for (size_t i = 0; i < rows.size(); ++i) {
    for (size_t c = 0; c < ncols; ++c) {
      std::vector<double> v;
      for (auto* r : rows[i])
        if (c != ncols - 1 || (r->have_space && r->space.records)) v.push_back(cols[c].get(*r));
      text[i].push_back(v.empty() ? "-" : median_and_spread(summarize(v), cols[c].fmt));
    }
    size_t failed = 0;
    bool counted = false;
    for (auto* r : rows[i]) failed += r->failed, counted |= r->counted;
    text[i].push_back(!failed        ? (counted ? "ok" : "-")
                      : reps == 1    ? "FAIL"
                                     : "FAIL " + std::to_string(failed) + "/" + std::to_string(rows[i].size()));
    // One repetition: the fixed widths (a long value widens its own row only).
    if (reps > 1)
      for (size_t c = 0; c <= ncols; ++c) width[c] = std::max(width[c], static_cast<int>(text[i][c].size()));
  }
  int lw = 14;
  int ww = 17;
  for (auto& r : rs) lw = std::max(lw, static_cast<int>(r.label.size()));
  for (auto& r : rs) ww = std::max(ww, static_cast<int>(r.cfg.w.name.size()));
  std::fprintf(f, "%-*s %-8s %-*s", lw, "index", "mode", ww, "workload");
  for (size_t c = 0; c < ncols; ++c) std::fprintf(f, " %*s", width[c], cols[c].head);
  std::fprintf(f, " %*s\n", width[ncols], "check");
  for (size_t i = 0; i < rows.size(); ++i) {
    const run_result& r = *rows[i].front();
    std::fprintf(f, "%-*s %-8s %-*s", lw, r.label.c_str(),
                 r.cfg.plugin.empty() ? std::string(pm::to_string(r.cfg.base.mode.value_or(pm::mode::persist))).c_str()
                                      : "-",
                 ww, r.cfg.w.name.c_str());
    for (size_t c = 0; c <= ncols; ++c) std::fprintf(f, " %*s", width[c], text[i][c].c_str());
    std::fprintf(f, "\n");
  }
  // A grid repeats a run per mode and thread count: each note is printed
  // once per index, with the workloads it came from.
  struct note_line {
    std::string label, note, workloads;
  };
  std::vector<note_line> notes;
  for (auto& r : rs) {
    if (r.failed)
      std::fprintf(f, "FAILED %s %s%s: %s\n", r.label.c_str(), r.cfg.w.name.c_str(),
                   reps > 1 ? (" (repetition " + std::to_string(r.repetition + 1) + ")").c_str() : "",
                   r.failure.c_str());
    for (auto& n : r.notes) {
      auto it = std::find_if(notes.begin(), notes.end(), [&](auto& x) { return x.label == r.label && x.note == n; });
      if (it == notes.end())
        notes.push_back({r.label, n, r.cfg.w.name});
      else if (("," + it->workloads + ",").find("," + r.cfg.w.name + ",") == std::string::npos)
        it->workloads += "," + r.cfg.w.name;
    }
  }
  for (auto& n : notes)
    std::fprintf(f, "note: %s %s: %s\n", n.label.c_str(), n.workloads.c_str(), n.note.c_str());
  if (!detail) return;
  for (auto& r : rs) {
    std::fprintf(f, "\n%s / %s%s  (%s, %s, %u thread%s, %s %s, %s universe)\n", r.label.c_str(),
                 r.cfg.w.name.c_str(),
                 reps > 1 ? (", repetition " + std::to_string(r.repetition + 1)).c_str() : "",
                 std::string(pm::to_string(r.cfg.base.mode.value_or(pm::mode::persist))).c_str(),
                 std::string(to_string(r.cfg.parallel)).c_str(), r.cfg.threads, r.cfg.threads == 1 ? "" : "s",
                 mix_string(r.cfg.w).c_str(), std::string(to_string(r.cfg.w.dist)).c_str(),
                 std::string(to_string(r.cfg.universe)).c_str());
    std::fprintf(f, "  %-7s %11s %11s %8s %7s %7s %7s %7s %8s %8s %8s %9s %8s %8s %8s\n", "op", "ops", "succeeded",
                 "Mops/s", "min", "p50", "p90", "p99", "p99.9", "p99.99", "p99.999", "max ns", "flush/op", "fence/op",
                 "alloc/op");
    auto row = [&](const char* name, const op_stats& o) {
      const auto& h = o.lat;
      std::fprintf(f,
                   "  %-7s %11" PRIu64 " %11" PRIu64 " %8.2f %7" PRIu64 " %7" PRIu64 " %7" PRIu64 " %7" PRIu64
                   " %8" PRIu64 " %8" PRIu64 " %8" PRIu64 " %9" PRIu64 " %8.2f %8.2f %8.2f\n",
                   name, o.done, o.ok, r.all.done ? r.mops * per(o.done, r.all.done) : 0.0, h.min(), h.percentile(0.5),
                   h.percentile(0.9), h.percentile(0.99), h.percentile(0.999), h.percentile(0.9999),
                   h.percentile(0.99999), h.max(), per(o.flushes, o.done), per(o.fences, o.done), per(o.allocs, o.done));
    };
    for (unsigned i = 0; i < k_nops; ++i)
      if (r.per_op[i].done) row(std::string(to_string(static_cast<op_type>(i))).c_str(), r.per_op[i]);
    row("all", r.all);
    std::fprintf(f, "  load: %" PRIu64 " records in %.3f s (%.2f Mops/s), %.2f flushes, %.2f fences, %.2f allocs per insert\n",
                 r.load_ok, r.load_seconds, r.load_seconds > 0 ? r.load_ok / r.load_seconds / 1e6 : 0.0,
                 per(r.load_flushes, r.load_ok), per(r.load_fences, r.load_ok), per(r.load_allocs, r.load_ok));
    if (r.have_space)
      std::fprintf(f, "  space after prefill: PM %s used (%s reserved), DRAM %s (allocator %s), %.1f bytes/record\n",
                   human_bytes(static_cast<double>(r.space.pm_bytes_used)).c_str(),
                   human_bytes(static_cast<double>(r.space.pm_bytes_reserved)).c_str(),
                   human_bytes(static_cast<double>(r.space.dram_bytes)).c_str(),
                   human_bytes(static_cast<double>(r.space.alloc_dram_bytes)).c_str(),
                   per(r.space.pm_bytes_used + r.space.dram_bytes, r.space.records));
    std::fprintf(f, "  run: %.2f Mops/s over %.3f s busy per thread; %.2f Mops/s per CPU-second (%.3f s CPU per thread)\n",
                 r.mops, r.busy_seconds, r.mops_cpu, r.cpu_seconds);
    if (r.key_compares_per_op >= 0) std::fprintf(f, "  key comparisons: %.2f per operation\n", r.key_compares_per_op);
    if (!r.series_mops.empty()) {
      double lo = r.series_mops[0], hi = lo;
      for (double m : r.series_mops) lo = std::min(lo, m), hi = std::max(hi, m);
      std::fprintf(f, "  per %u ms window (wall clock, generation included): %.2f .. %.2f Mops/s over %zu windows\n",
                   r.cfg.window_ms, lo, hi, r.series_mops.size());
    }
    if (r.counted)
      std::fprintf(f, "  records: expected %" PRIu64 ", index reports %" PRIu64 "%s, check(): %s\n", r.expected_records,
                   r.reported_records,
                   r.scanned ? (", scan finds " + std::to_string(r.scanned_records)).c_str() : "",
                   r.structure.c_str());
    if (r.have_recovery)
      std::fprintf(f, "  recovery: clean reopen %.4f s (%.4f cpu-s); after a crash reopen %.4f s (%.4f cpu-s; repair + "
                      "tracing %.4f s, %" PRIu64 " blocks), %" PRIu64 " records\n",
                   r.clean_open_seconds, r.clean_open_cpu_seconds, r.dirty_open_seconds, r.dirty_open_cpu_seconds,
                   r.dirty_recover_seconds, r.dirty_traced_blocks, r.records_after_recovery);
  }
}

void flatten(const json::value& v, const std::string& prefix, std::vector<std::pair<std::string, double>>& out) {
  if (v.is_number()) {
    out.emplace_back(prefix, json::num(v));
  } else if (v.is_boolean()) {
    out.emplace_back(prefix, json::boolean(v) ? 1 : 0);
  } else if (v.is_object()) {
    for (auto& [key, x] : v.items()) flatten(x, prefix.empty() ? key : prefix + "." + key, out);
  } else if (v.is_array()) {
    bool numbers = !v.empty();
    for (auto& x : v) numbers &= x.is_number();
    if (numbers) return;  // a time series
    for (size_t i = 0; i < v.size(); ++i) flatten(v[i], prefix + "[" + std::to_string(i) + "]", out);
  }
}

std::string run_key(const json::value& run) {
  auto s = [&](const char* k) {
    auto* x = json::find(run, k);
    return x && x->is_string() ? json::str(*x) : std::string("?");
  };
  auto* t = json::find(run, "threads");
  std::string k = s("index") + " " + s("workload") + " " + s("mode") + " " + s("parallel") + " t" +
                  std::to_string(t && t->is_number() ? static_cast<int>(json::num(*t)) : 0);
  // Files from before datasets: u64 keys, 8-byte values (same key as before).
  auto* d = json::find(run, "dataset");
  auto* v = json::find(run, "value_size");
  if (d && d->is_string() && json::str(*d) != "u64") k += " " + json::str(*d);
  if (v && v->is_number() && json::num(*v) != 8) k += " v" + std::to_string(static_cast<uint64_t>(json::num(*v)));
  return k;
}

std::string to_csv(const std::vector<json::value>& runs) {
  std::vector<std::string> cols;
  std::vector<std::vector<std::pair<std::string, double>>> rows;
  for (auto& r : runs) {
    rows.emplace_back();
    flatten(r, "", rows.back());
    for (auto& [k, v] : rows.back()) {
      bool have = false;
      for (auto& c : cols) have |= c == k;
      if (!have) cols.push_back(k);
    }
  }
  std::string out = "run";
  for (auto& c : cols) out += "," + c;
  out += "\n";
  for (size_t i = 0; i < runs.size(); ++i) {
    out += "\"" + run_key(runs[i]) + "\"";
    for (auto& c : cols) {
      out += ",";
      for (auto& [k, v] : rows[i])
        if (k == c) {
          char b[40];
          std::snprintf(b, sizeof b, "%.10g", v);
          out += b;
          break;
        }
    }
    out += "\n";
  }
  return out;
}

}  // namespace pmindex::bench

// Running a whole study and writing what it found: DIR/results.json (the
// context, every run's command, every bench result tagged with its part and
// run, per-cell medians, the published figures beside ours, the findings'
// verdicts), DIR/README.md, and the HTML report (python/pmindex/study_report.py).
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <set>
#include <thread>

#include "pmindex/error.hpp"
#include "study_run.hpp"
#include "sysinfo.hpp"

#ifndef PMINDEX_SOURCE_DIR
#define PMINDEX_SOURCE_DIR ""
#endif

namespace pmindex::cli::study {

namespace json = bench::json;

namespace {

std::string fmt(double v, int prec = 3) {
  char b[40];
  std::snprintf(b, sizeof b, "%.*g", prec, v);
  return b;
}

std::string joined(const std::vector<std::string>& a) {
  std::string s;
  for (auto& x : a) {
    bool plain = !x.empty() && x.find_first_of(" \t\"'$\\;&|<>()*?") == std::string::npos;
    s += (s.empty() ? "" : " ") + (plain ? x : "'" + x + "'");
  }
  return s;
}

// What a failed run said of its failure: the harness's "FAILED" lines (at
// most three), else its last line of stderr; one line, shortened, the
// scratch pool's path (this machine's, this process's) written POOL.
std::string failure_lines(const std::string& err_path, const std::string& pool) {
  std::ifstream in(err_path);
  std::string line, last, out;
  int n = 0;
  while (std::getline(in, line)) {
    if (line.empty()) continue;
    last = line;
    const bool summary = line.find("some runs FAILED") != std::string::npos;  // says only "see above"
    if (!summary && line.find("FAILED") != std::string::npos && n < 3) out += (n++ ? "; " : "") + line;
  }
  if (out.empty()) out = last;
  for (size_t at; !pool.empty() && (at = out.find(pool)) != std::string::npos;) out.replace(at, pool.size(), "POOL");
  if (out.size() > 400) out = out.substr(0, 397) + "...";
  return out;
}

json::value stat_json(const stat& s) {
  auto o = json::value::object();
  o["n"] = static_cast<uint64_t>(s.n);
  o["median"] = s.median;
  o["min"] = s.min;
  o["max"] = s.max;
  return o;
}

// The metrics every cell reports (and the report plots), plus whatever the
// findings and figures name.
std::vector<std::string> cell_metrics(const study_spec& s) {
  std::vector<std::string> m = {"run.mops",        "run.latency_ns.p50", "run.latency_ns.p99",
                                "run.latency_ns.p99.9", "run.flushes_per_op", "load.flushes_per_insert",
                                "space.pm_bytes_per_record", "space.dram_bytes_per_record",
                                "space.index_dram_bytes_per_record", "space.alloc_dram_bytes_per_record",
                                "space.pm_overhead_per_record", "recovery.dirty_open_seconds",
                                "recovery.clean_open_seconds", "recovery.dirty_open_cpu_seconds"};
  auto add = [&](const std::string& x) {
    if (std::find(m.begin(), m.end(), x) == m.end()) m.push_back(x);
  };
  for (auto& f : s.findings) add(f.metric);
  for (auto& p : s.published) add(p.metric);
  return m;
}

std::string md_escape(std::string s) {
  std::string o;
  for (char c : s) o += c == '|' ? std::string("\\|") : std::string(1, c);
  return o;
}

void write_readme(const std::string& path, const study_spec& s, const run_settings& rs, const json::value& ctx,
                  const std::vector<cell>& cells, const json::value& findings, const json::value& published,
                  const std::vector<std::string>& notes, uint64_t reps) {
  std::ostringstream o;
  auto cs = [&](const char* k) {
    auto* v = json::find(ctx, k);
    if (!v) return std::string("?");
    if (v->is_number()) return fmt(json::num(*v), 6);
    return json::str(*v);
  };
  o << "# " << s.name << ": " << s.title << "\n\n";
  o << "Reproduces: " << s.paper << ".\n\n";
  o << "- command: `" << rs.command << "`\n";
  o << "- scale: " << rs.scale << ", " << reps << " repetition" << (reps == 1 ? "" : "s")
    << " per cell (medians; min–max in brackets)\n";
  o << "- date: " << cs("date") << "\n";
  o << "- machine: " << cs("cpu") << ", " << cs("cores") << " cores, kernel " << cs("kernel")
    << ", flush instruction " << cs("flush_instruction") << "\n";
  if (auto* b = json::find(ctx, "git_commits")) {  // runs of several builds (a --resume after a rebuild)
    o << "- build: " << cs("build_type") << " (" << cs("compiler") << "), runs of " << json::members(*b).size()
      << " commits:\n";
    for (auto& [commit, ids] : json::members(*b).items()) {
      o << "  - " << commit << ":";
      for (auto& id : json::items(ids)) o << " " << json::str(id);
      o << "\n";
    }
    o << "\n";
  } else {
    o << "- build: " << cs("build_type") << " (" << cs("compiler") << "), commit " << cs("git_commit") << "\n\n";
  }
  o << "Ratios side by side are what carries over between machines; absolute numbers are this machine's.\n\n";

  o << "## Findings\n\n| finding | paper's statement | source | verdict | measured | spread |\n|---|---|---|---|---|---|\n";
  for (auto& f : json::items(findings)) {
    auto g = [&](const char* k) { return json::find(f, k) ? json::str(*json::find(f, k)) : std::string(); };
    bool comparable = g("verdict") != "not comparable";
    o << "| " << g("id") << " | " << md_escape(g("statement")) << " | " << md_escape(g("source")) << " | **"
      << g("verdict") << "** | "
      << (comparable ? fmt(json::num(*json::find(f, "ratio"))) + " (" + md_escape(g("detail")) + ")" : md_escape(g("detail")))
      << " | " << (comparable ? fmt(json::num(*json::find(f, "ratio_min"))) + "–" + fmt(json::num(*json::find(f, "ratio_max"))) : "")
      << " |\n";
  }

  if (!json::items(published).empty()) o << "\n## The paper's figures beside ours\n";
  for (auto& p : json::items(published)) {
    o << "\n### " << json::str(*json::find(p, "title")) << "\n\n" << json::str(*json::find(p, "source")) << ", in " << json::str(*json::find(p, "unit"));
    if (json::boolean(*json::find(p, "approximate"))) o << " (read off a plot: approximate)";
    if (!json::str(*json::find(p, "note")).empty()) o << ". " << json::str(*json::find(p, "note"));
    o << "\n\n| " << json::str(*json::find(p, "by")) << " | paper | ours |\n|---|---|---|\n";
    for (auto& v : json::items(*json::find(p, "values"))) {
      o << "| " << json::str(*json::find(v, "index")) << " | " << fmt(json::num(*json::find(v, "paper"))) << " | ";
      if (json::find(v, "ours")) o << fmt(json::num(*json::find(v, "ours"))) << " [" << fmt(json::num(*json::find(v, "ours_min"))) << "–"
                          << fmt(json::num(*json::find(v, "ours_max"))) << "]";
      else o << "not measured";
      o << " |\n";
    }
  }

  o << "\n## Headline numbers\n";
  for (auto& part : s.parts) {
    std::vector<const cell*> mine;
    for (auto& c : cells)
      if (c.labels.at("part") == part.name) mine.push_back(&c);
    if (mine.empty()) continue;
    o << "\n### " << part.name << ": " << part.title << "\n\n";
    // The labels that vary within the part name its rows.
    std::vector<std::string> cols;
    for (auto& l : k_labels) {
      if (l == "part") continue;
      std::set<std::string> vals;
      for (auto* c : mine) vals.insert(c->labels.count(l) ? c->labels.at(l) : "");
      if (vals.size() > 1 || l == "index") cols.push_back(l);
    }
    for (auto& l : cols) o << "| " << l << " ";
    o << "| Mops/s | p99 ns | flush/op | PM B/rec | PM reserved beyond use B/rec | DRAM B/rec (index) | DRAM B/rec "
         "(allocator) |\n";
    for (size_t i = 0; i < cols.size() + 7; ++i) o << "|---";
    o << "|\n";
    for (auto* c : mine) {
      for (auto& l : cols) o << "| " << (c->labels.count(l) ? md_escape(c->labels.at(l)) : "") << " ";
      auto m = metric_stat(*c, "run.mops");
      o << "| " << fmt(m.median) << (m.n > 1 ? " [" + fmt(m.min) + "–" + fmt(m.max) + "]" : "") << " ";
      auto p99 = metric_stat(*c, "run.latency_ns.p99");
      o << "| " << (p99.n ? fmt(p99.median) : "") << " ";
      auto fl = metric_stat(*c, "run.flushes_per_op");
      o << "| " << (fl.n ? fmt(fl.median) : "") << " ";
      auto pm = metric_stat(*c, "space.pm_bytes_per_record");
      o << "| " << (pm.n ? fmt(pm.median) : "") << " ";
      auto ov = metric_stat(*c, "space.pm_overhead_per_record");
      o << "| " << (ov.n ? fmt(ov.median) : "") << " ";
      // Results that predate the split hold only the total: shown as such.
      auto dr = metric_stat(*c, "space.index_dram_bytes_per_record");
      std::string both;
      if (!dr.n) dr = metric_stat(*c, "space.dram_bytes_per_record"), both = " (index and allocator)";
      o << "| " << (dr.n ? fmt(dr.median) + both : "") << " ";
      auto da = metric_stat(*c, "space.alloc_dram_bytes_per_record");
      o << "| " << (da.n ? fmt(da.median) : "") << " |\n";
    }
  }
  if (!notes.empty()) {
    o << "\n## Notes\n\n";
    for (auto& n : notes) o << "- " << md_escape(n) << "\n";
  }
  o << "\nEvery run's exact `pmindex bench` command is in results.json (`runs`); the report page is index.html.\n";
  std::ofstream f(path);
  f << o.str();
  if (!f) throw error(errc::io, "cannot write " + path);
}

}  // namespace

int run_study(const study_spec& s, const run_settings& rs) {
  std::error_code ec;
  std::filesystem::create_directories(rs.out_dir + "/raw", ec);
  if (ec) throw error(errc::io, "cannot make " + rs.out_dir + "/raw: " + ec.message());
  uint64_t reps = rs.repetitions;
  if (!reps) reps = s.repetitions.count(rs.scale) ? s.repetitions.at(rs.scale) : 1;
  const unsigned cores = std::max(1u, std::thread::hardware_concurrency());
  auto invs = expand(s, rs, cores);
  std::vector<std::string> notes;
  if (rs.scale == "paper") {
    std::printf("study %s: estimating each index's footprint from loads of 100K and 200K records (and of a 25th "
                "of a run's records, up to 4M, for a run of more than 4M)\n",
                s.name.c_str());
    fit_to_machine(invs, rs, notes);
    for (auto& n : notes) std::printf("  %s\n", n.c_str());
  }
  std::vector<json::value> results;
  auto runs = json::value::array();
  json::value ctx;
  bool have_ctx = false, failed = false;
  // Each run's build: a --resume after a rebuild mixes builds, and the page
  // says which runs came from which commit.
  std::map<std::string, std::vector<std::string>> runs_of_commit;
  const std::string pool = rs.pool_dir + "/pmindex-study-" + std::to_string(getpid()) + ".pool";
  for (size_t i = 0; i < invs.size(); ++i) {
    auto& inv = invs[i];
    std::printf("[%zu/%zu] %s: ", i + 1, invs.size(), inv.id.c_str());
    std::fflush(stdout);
    auto entry = json::value::object();
    entry["id"] = inv.id;
    entry["part"] = inv.run->part;
    entry["run"] = inv.run->name;
    if (inv.indexes.empty() && inv.plugins.empty()) {
      std::printf("skipped (no index left to run)\n");
      entry["status"] = "skipped";
      runs.push_back(entry);
      continue;
    }
    auto t0 = std::chrono::steady_clock::now();
    std::vector<json::value> got;
    int rc = 0;
    if (inv.run->kind == "serve") {
      entry["command"] = "pmindex serve --index I --listen 127.0.0.1:0 + loopback memcached clients";
      got = run_serve(inv, rs, reps, notes);
    } else {
      std::string json_path = rs.out_dir + "/raw/" + inv.id + ".json";
      std::string done_path = rs.out_dir + "/raw/" + inv.id + ".done";
      auto argv = bench_argv(inv, rs, reps, json_path, pool);
      entry["command"] = "pmindex " + joined(argv);
      // What makes a finished run reusable by --resume: its command with the
      // pool's name (it holds this process's id) left out.
      auto same_run = bench_argv(inv, rs, reps, json_path, "POOL");
      const std::string key = joined(same_run) + "\n";
      bool reused = false;
      if (rs.resume) {
        std::ifstream d(done_path);
        std::stringstream ds;
        ds << d.rdbuf();
        reused = d && ds.str() == key && access(json_path.c_str(), R_OK) == 0;
      }
      if (!reused) {
        std::remove(json_path.c_str());
        std::remove(done_path.c_str());
        argv.insert(argv.begin(), rs.self);
        rc = run_child(argv, rs.out_dir + "/raw/" + inv.id + ".txt", rs.out_dir + "/raw/" + inv.id + ".err");
      }
      entry["reused"] = reused;
      std::ifstream f(json_path);
      if (f) {
        std::stringstream ss;
        ss << f.rdbuf();
        try {
          auto doc = json::parse(ss.str());
          if (auto* c = json::find(doc, "context")) {
            if (!have_ctx) ctx = *c, have_ctx = true;
            if (auto* g = json::find(*c, "git_commit")) runs_of_commit[json::str(*g)].push_back(inv.id);
          }
          if (auto* r = json::find(doc, "results"))
            for (auto& x : json::items(*r)) got.push_back(x);
        } catch (const error& e) {
          notes.push_back(inv.id + ": unreadable result file: " + e.what());
        }
      }
      if (rc == 0 && !reused && !got.empty()) {
        std::ofstream d(done_path);
        d << key;
      }
      if (reused) std::printf("reused raw/%s.json, ", inv.id.c_str());
    }
    double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    for (auto& r : got) {
      auto lab = json::value::object();
      for (auto& [k, v] : inv.labels) lab[k] = v;
      // A wrapper's rows: bench names them by the wrapper (NAME=PATH);
      // the label says which of the study's wrappers it was.
      if (auto* ix = json::find(r, "index"); ix && json::find(r, "plugin"))
        for (auto* p : inv.plugins)
          if (ix->is_string() && json::str(*ix) == p->name) lab["plugin"] = p->name;
      r["study"] = lab;
      results.push_back(std::move(r));
    }
    entry["exit_code"] = rc;
    entry["seconds"] = secs;
    entry["results"] = static_cast<uint64_t>(got.size());
    std::string status = rc == 1   ? "check failed"
                         : rc != 0 ? "failed (exit code " + std::to_string(rc) + ")"
                         : got.empty() && inv.run->kind == "serve" ? "skipped"  // no server or load generator: noted
                                                                   : "ok";
    entry["status"] = status;
    if (rc != 0) {
      failed = true;
      // The reason, on the page: raw/ is not kept beside it.
      std::string why = failure_lines(rs.out_dir + "/raw/" + inv.id + ".err", pool);
      notes.push_back(inv.id + ": " + status + (why.empty() ? "" : ": " + why) + " (stderr: raw/" + inv.id + ".err)");
    }
    runs.push_back(entry);
    std::printf("%s, %zu results, %.1f s\n", status.c_str(), got.size(), secs);
  }

  if (!have_ctx) ctx = bench::context();
  auto context = json::value::object();
  for (auto& [k, v] : json::members(ctx).items())
    if (k != "options") context[k] = v;
  if (runs_of_commit.size() > 1) {
    auto builds = json::value::object();
    for (auto& [commit, ids] : runs_of_commit) {
      auto a = json::value::array();
      for (auto& id : ids) a.push_back(id);
      builds[commit] = a;
    }
    context["git_commits"] = builds;
  }
  context["command"] = rs.command;
  context["study"] = s.name;
  // The source tree's own study files by their path in the tree: a page
  // names no directory of the machine that ran it.
  const std::string tree_studies = std::string(PMINDEX_SOURCE_DIR) + "/studies/";
  const bool in_tree = *PMINDEX_SOURCE_DIR && s.path.rfind(tree_studies, 0) == 0;
  context["study_file"] = in_tree ? "studies/" + s.path.substr(tree_studies.size()) : s.path;
  context["scale"] = rs.scale;
  context["repetitions"] = reps;
  if (!json::find(context, "date")) {
    std::time_t now = std::time(nullptr);
    char b[64];
    std::strftime(b, sizeof b, "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&now));
    context["date"] = std::string(b);
  }

  auto cells = group_cells(results);
  auto cells_json = json::value::array();
  auto metrics = cell_metrics(s);
  for (auto& c : cells) {
    auto o = json::value::object();
    auto l = json::value::object();
    for (auto& [k, v] : c.labels) l[k] = v;
    o["labels"] = l;
    o["runs"] = static_cast<uint64_t>(c.runs.size());
    auto m = json::value::object();
    for (auto& name : metrics) {
      auto st = metric_stat(c, name);
      if (st.n) m[name] = stat_json(st);
    }
    o["metrics"] = m;
    cells_json.push_back(o);
  }

  auto findings = json::value::array();
  size_t held = 0, not_held = 0, nc = 0;
  for (auto& f : s.findings) {
    auto v = evaluate(f, cells);
    auto o = json::value::object();
    o["id"] = f.id;
    o["statement"] = f.statement;
    o["source"] = f.source;
    o["kind"] = f.kind;
    o["metric"] = f.metric;
    o["verdict"] = v.status;
    o["ratio"] = v.ratio;
    o["ratio_min"] = v.ratio_min;
    o["ratio_max"] = v.ratio_max;
    if (f.kind == "ratio") {
      auto w = json::value::array();
      w.push_back(f.lo);
      w.push_back(f.hi);
      o["within"] = w;
    } else if (f.kind == "above" || f.kind == "below") {
      o["bound"] = f.bound;
    } else {
      o["tolerance"] = f.tolerance;
      o["by"] = f.by;
    }
    o["detail"] = v.detail;
    findings.push_back(o);
    (v.status == "held" ? held : v.status == "not held" ? not_held : nc)++;
  }

  auto published = json::value::array();
  for (auto& p : s.published) {
    auto o = json::value::object();
    o["id"] = p.id;
    o["title"] = p.title;
    o["source"] = p.source;
    o["unit"] = p.unit;
    o["metric"] = p.metric;
    o["factor"] = p.factor;
    o["by"] = p.by;
    o["approximate"] = p.approximate;
    o["note"] = p.note;
    auto vals = json::value::array();
    for (auto& [idx, paper] : p.values) {
      auto v = json::value::object();
      v["index"] = idx;
      v["paper"] = paper;
      auto sel = p.where;
      sel[p.by] = idx;
      auto found = select(cells, sel);
      if (found.size() == 1) {
        auto st = metric_stat(*found[0], p.metric);
        if (st.n) {
          v["ours"] = st.median * p.factor;
          v["ours_min"] = st.min * p.factor;
          v["ours_max"] = st.max * p.factor;
        }
      }
      vals.push_back(v);
    }
    o["values"] = vals;
    published.push_back(o);
  }

  auto doc = json::value::object();
  doc["context"] = context;
  auto sj = json::value::object();
  sj["name"] = s.name;
  sj["title"] = s.title;
  sj["paper"] = s.paper;
  sj["description"] = s.description;
  auto parts = json::value::array();
  for (auto& p : s.parts) {
    if (!rs.only.empty() && !rs.only.count(p.name)) continue;
    auto pj = json::value::object();
    pj["name"] = p.name;
    pj["title"] = p.title;
    pj["description"] = p.description;
    parts.push_back(pj);
  }
  sj["parts"] = parts;
  doc["study"] = sj;
  doc["runs"] = runs;
  auto nj = json::value::array();
  for (auto& n : notes) nj.push_back(n);
  doc["notes"] = nj;
  doc["findings"] = findings;
  doc["published"] = published;
  doc["cells"] = cells_json;
  auto rj = json::value::array();
  for (auto& r : results) rj.push_back(r);
  doc["results"] = rj;
  {
    std::ofstream f(rs.out_dir + "/results.json");
    f << json::dump(doc);
    if (!f) throw error(errc::io, "cannot write " + rs.out_dir + "/results.json");
  }
  write_readme(rs.out_dir + "/README.md", s, rs, context, cells, findings, published, notes, reps);

  // The HTML page and figures (Python, matplotlib).
  const char* env = std::getenv("PMINDEX_PYTHON");
  std::string python = env && *env ? env : "python3";
  std::string script = std::string(PMINDEX_SOURCE_DIR) + "/python/pmindex/study_report.py";
  std::vector<std::string> argv = {python};
  if (*PMINDEX_SOURCE_DIR && access(script.c_str(), R_OK) == 0) argv.push_back(script);
  else argv.insert(argv.end(), {"-m", "pmindex.study_report"});
  argv.insert(argv.end(), {rs.out_dir + "/results.json", "--out", rs.out_dir});
  int prc = -1;
  try {
    prc = run_child(argv, rs.out_dir + "/raw/report.txt", rs.out_dir + "/raw/report.err");
  } catch (const error&) {
  }
  std::printf("study %s (%s scale): %zu runs, %zu results in %zu cells; findings: %zu held, %zu not held, %zu not "
              "comparable\n",
              s.name.c_str(), rs.scale.c_str(), invs.size(), results.size(), cells.size(), held, not_held, nc);
  std::printf("  %s/results.json\n  %s/README.md\n", rs.out_dir.c_str(), rs.out_dir.c_str());
  if (prc == 0) std::printf("  %s/index.html\n", rs.out_dir.c_str());
  else
    std::fprintf(stderr, "pmindex study: the HTML report was not made (%s; see %s/raw/report.err)\n",
                 python.c_str(), rs.out_dir.c_str());
  for (auto& n : notes) std::printf("note: %s\n", n.c_str());
  return failed ? static_cast<int>(errc::failure) : 0;
}

}  // namespace pmindex::cli::study

// Expanding a study's runs into `pmindex bench` invocations, running them as
// child processes, and (at paper scale) leaving out what would not fit.
#include "study_run.hpp"

#include <fcntl.h>
#include <spawn.h>
#include <sys/statvfs.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <map>
#include <sstream>

#include "cli.hpp"
#include "sysinfo.hpp"
#include "pmindex/error.hpp"

extern char** environ;

namespace pmindex::cli::study {

namespace json = bench::json;

namespace {

// Options whose value, as the study file writes it, labels the cell.
const std::set<std::string> k_labelled = {"threads",     "dataset",       "value-size",  "mode",
                                          "parallel",    "distribution",  "universe",    "scan-size",
                                          "range-threads", "selectivity", "pm-write-ns", "lock"};

std::string label_name(std::string opt) {
  for (auto& c : opt)
    if (c == '-') c = '_';
  return opt;
}

uint64_t records_of(const std::string& text) {
  try {
    return parse_size("records", text);
  } catch (const error&) {
    return 0;
  }
}

std::string file_stem(std::string s) {
  for (auto& c : s)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '-' && c != '.') c = '_';
  return s;
}

}  // namespace

std::vector<invocation> expand(const study_spec& s, const run_settings& rs, unsigned cores) {
  std::vector<invocation> out;
  auto defaults_it = s.scale_defaults.find(rs.scale);
  for (auto& r : s.runs) {
    if (!rs.only.empty() && !rs.only.count(r.part)) continue;
    // The options at this scale: the scale's defaults, then the run's own.
    std::vector<std::pair<std::string, std::vector<std::string>>> opts;
    auto put = [&](const std::string& k, std::vector<std::string> v) {
      for (auto& o : opts)
        if (o.first == k) {
          o.second = std::move(v);
          return;
        }
      opts.push_back({k, std::move(v)});
    };
    if (defaults_it != s.scale_defaults.end())
      for (auto& [k, v] : defaults_it->second) put(k, {v});
    for (auto& [k, v] : r.options) {
      auto vals = v.at(rs.scale);
      if (!vals.empty()) put(k, vals);
    }
    // One invocation per combination of the list-valued options.
    std::vector<size_t> pick(opts.size(), 0);
    for (bool more = true; more;) {
      invocation inv;
      inv.run = &r;
      inv.indexes = r.indexes;
      inv.labels = {{"part", r.part}, {"run", r.name}};
      inv.id = file_stem(r.part + "." + r.name);
      for (size_t i = 0; i < opts.size(); ++i) {
        const std::string& k = opts[i].first;
        std::string v = opts[i].second[pick[i]];
        if (opts[i].second.size() > 1) inv.id += "." + file_stem(k + "=" + v);
        if (k_labelled.count(k)) inv.labels[label_name(k)] = v;
        if (k == "threads") {
          inv.threads = v == "all" ? cores : records_of(v);
          if (v == "all") v = std::to_string(cores);
        }
        if (k == "records") inv.records = records_of(v);
        if (k == "parallel") inv.instances = v == "instance";
        if (v == "true") v = "";        // a bare flag
        else if (v == "false") continue;  // a flag left off
        inv.options.push_back({k, v});
      }
      if (!inv.threads) inv.threads = cores;
      // The study's wrappers run in the indexes' bench command: one
      // interleaving, each original measured beside its port.
      if (r.plugins && r.kind == "bench")
        for (auto& p : s.plugins) inv.plugins.push_back(&p);
      out.push_back(inv);
      more = false;
      for (size_t i = opts.size(); i-- > 0;) {
        if (++pick[i] < opts[i].second.size()) {
          more = true;
          break;
        }
        pick[i] = 0;
      }
    }
  }
  return out;
}

std::vector<std::string> bench_argv(const invocation& inv, const run_settings& rs, uint64_t repetitions,
                                    const std::string& json_path, const std::string& pool) {
  std::vector<std::string> a = {"bench"};
  if (!inv.indexes.empty()) {
    std::string list;
    for (auto& i : inv.indexes) list += (list.empty() ? "" : ",") + i;
    a.insert(a.end(), {"--index", list});
  }
  if (!inv.plugins.empty()) {
    std::string list, abis;
    for (auto* p : inv.plugins) {
      list += (list.empty() ? "" : ",") + p->name + "=" + p->path;
      abis += (abis.empty() ? "" : ",") + p->abi;
    }
    a.insert(a.end(), {"--plugin", list, "--plugin-abi", abis});
  }
  std::string wl;
  for (auto& w : inv.run->workloads) wl += (wl.empty() ? "" : ",") + w;
  a.insert(a.end(), {"--workload", wl});
  for (auto& [k, v] : inv.options) {
    a.push_back("--" + k);
    if (!v.empty()) a.push_back(v);
  }
  // Only asked for when more than one: a single run needs no aggregation.
  if (repetitions > 1) a.insert(a.end(), {"--repetitions", std::to_string(repetitions)});
  // One load per index and prefill, not per cell: at 10M records the load
  // takes longer than the workload it prepares.
  a.insert(a.end(), {"--reuse-prefill", "--pool", pool, "--no-progress", "--json", json_path});
  (void)rs;
  return a;
}

int run_child(const std::vector<std::string>& argv, const std::string& out_file, const std::string& err_file) {
  // Every run of a study has one commit: the children take the parent's
  // (bench/sysinfo.hpp) rather than asking git again, a tenth of a second each.
  static const bool commit_shared = ::setenv(bench::k_commit_env, bench::git_commit().c_str(), 1) == 0;
  (void)commit_shared;
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_addopen(&fa, 1, out_file.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_addopen(&fa, 2, err_file.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  std::vector<char*> cargv;
  for (auto& s : argv) cargv.push_back(const_cast<char*>(s.c_str()));
  cargv.push_back(nullptr);
  pid_t pid;
  int rc = posix_spawnp(&pid, cargv[0], &fa, nullptr, cargv.data(), environ);
  posix_spawn_file_actions_destroy(&fa);
  if (rc != 0) throw error(errc::io, "cannot start " + argv[0] + ": " + std::strerror(rc));
  int status = 0;
  while (waitpid(pid, &status, 0) < 0)
    if (errno != EINTR) throw error(errc::io, std::string("waitpid: ") + std::strerror(errno));
  if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
  return WEXITSTATUS(status);
}

namespace {

uint64_t mem_available() {
  std::ifstream f("/proc/meminfo");
  std::string k;
  uint64_t v;
  std::string unit;
  while (f >> k >> v) {
    std::getline(f, unit);
    if (k == "MemAvailable:") return v * 1024;
  }
  return 0;
}

bool on_tmpfs(const std::string& dir) {
  // A pool on tmpfs (/dev/shm) is RAM: it counts against MemAvailable too.
  std::ifstream f("/proc/mounts");
  std::string dev, mnt, type, rest;
  size_t best = 0;
  bool tmp = false;
  while (f >> dev >> mnt >> type) {
    std::getline(f, rest);
    if (dir.rfind(mnt, 0) == 0 && mnt.size() >= best) {
      best = mnt.size();
      tmp = type == "tmpfs";
    }
  }
  return tmp;
}

std::string gib(double b) {
  char s[32];
  if (b < 1024.0 * 1024 * 1024)
    std::snprintf(s, sizeof s, "%.0f MiB", b / (1024.0 * 1024));
  else
    std::snprintf(s, sizeof s, "%.1f GiB", b / (1024.0 * 1024 * 1024));
  return s;
}

}  // namespace

void fit_to_machine(std::vector<invocation>& invs, const run_settings& rs, std::vector<std::string>& notes) {
  // An index's footprint as a fixed part and a rate per record, from small
  // loads: the rate is what the last load's extra records cost, so an index
  // that reserves much up front (a radix tree's arenas: ~25 MiB, 390 bytes
  // a record at 100K records and 35 past 200K) is not taken for one that
  // needs that much per record. A run of more than k_far records probes a
  // third load of a 25th of them (at most k_far): growth that sets in past
  // the small loads shows there (ROART: 53 bytes a record at 2M records,
  // 259 at 4M, as its leaf arrays fill).
  struct per_record {
    double pm_fixed = 0, pm = 0, dram_fixed = 0, dram = 0;
    bool ok = false;
  };
  std::map<std::string, per_record> probed;
  constexpr uint64_t k_far = 4000000;
  struct statvfs vfs {};
  const bool have_vfs = statvfs(rs.pool_dir.c_str(), &vfs) == 0;
  const double fs_free = have_vfs ? static_cast<double>(vfs.f_bavail) * static_cast<double>(vfs.f_frsize) : 0;
  const double ram = static_cast<double>(mem_available());
  const bool tmp = on_tmpfs(rs.pool_dir);
  for (auto& inv : invs) {
    if (inv.run->kind != "bench") continue;
    std::string dataset = "u64", value = "8", mode, params;
    double pool_size = 0;  // the run's --pool-size (0: not given; bench sizes the pool from the run)
    for (auto& [k, v] : inv.options) {
      if (k == "pool-size") pool_size = static_cast<double>(parse_size("--pool-size", v));
      if (k == "dataset") dataset = v;
      if (k == "value-size") value = v;
      if (k == "mode") mode = v;
      if (k == "params") params = v;
    }
    std::vector<std::string> keep;
    const double target = static_cast<double>(inv.records) * (inv.instances ? static_cast<double>(inv.threads) : 1.0);
    std::vector<uint64_t> probes = {100000, 200000};
    if (target > k_far) probes.push_back(std::min<uint64_t>(std::max<uint64_t>(uint64_t(target / 25), 400000), k_far));
    for (auto& idx : inv.indexes) {
      const std::string what = idx + "|" + dataset + "|" + value + "|" + mode + "|" + params;
      const std::string key = what + "|" + std::to_string(probes.back());
      auto it = probed.find(key);
      if (it == probed.end()) {
        const size_t np = probes.size();
        double pm[3], dram[3], n[3];
        bool ok = true;
        for (size_t i = 0; i < np && ok; ++i) {
          std::string stem = rs.out_dir + "/raw/probe." + file_stem(what) + "." + std::to_string(probes[i]);
          std::vector<std::string> a = {rs.self, "bench", "--index", idx, "--workload", "read=1", "--ops", "1",
                                        "--records", std::to_string(probes[i]), "--threads", "1", "--dataset",
                                        dataset, "--value-size", value, "--no-check", "--no-progress",
                                        "--pool", rs.pool_dir + "/pmindex-study-probe-" + std::to_string(getpid()) + ".pool",
                                        "--json", stem + ".json"};
          if (!mode.empty()) a.insert(a.end(), {"--mode", mode});
          if (!params.empty()) a.insert(a.end(), {"--params", params});
          ok = run_child(a, stem + ".txt", stem + ".err") == 0;
          if (!ok) break;
          std::ifstream f(stem + ".json");
          std::stringstream ss;
          ss << f.rdbuf();
          try {
            auto doc = json::parse(ss.str());
            auto& r = json::items(*json::find(doc, "results")).at(0);
            ok = metric_of(r, "space.pm_bytes_reserved", pm[i]) && metric_of(r, "space.dram_bytes", dram[i]) &&
                 metric_of(r, "space.records", n[i]) && n[i] > 0;
          } catch (const std::exception&) {
            ok = false;
          }
        }
        per_record pr;
        const size_t a = np - 2, b = np - 1;  // the last two loads
        if (ok && n[b] > n[a]) {
          // A rate below 8 bytes a record (the key alone: the last load
          // happened to reserve little more than the one before) is taken as 8.
          pr.pm = std::max((pm[b] - pm[a]) / (n[b] - n[a]), 8.0);
          pr.dram = std::max((dram[b] - dram[a]) / (n[b] - n[a]), 0.0);
          pr.pm_fixed = std::max(pm[b] - pr.pm * n[b], 0.0);
          pr.dram_fixed = std::max(dram[b] - pr.dram * n[b], 0.0);
          pr.ok = true;
        }
        it = probed.emplace(key, pr).first;
      }
      const per_record& pr = it->second;
      if (!pr.ok) {
        notes.push_back(inv.id + ": " + idx + ": no footprint estimate (its probe failed); run as asked");
        keep.push_back(idx);
        continue;
      }
      // A quarter more than the probe's rate: leaves split, runs insert.
      double n = target * 1.25;
      double pm = pr.pm_fixed + pr.pm * n, dram = pr.dram_fixed + pr.dram * n;
      double need_ram = dram + (tmp ? pm : 0);
      std::string why;
      if (pool_size > 0 && pm > pool_size)
        why = "its pool would need ~" + gib(pm) + ", more than the run's pool size (" + gib(pool_size) + ")";
      else if (have_vfs && pm > fs_free) why = "its pool (~" + gib(pm) + ") exceeds the free space of " + rs.pool_dir + " (" + gib(fs_free) + ")";
      else if (ram > 0 && need_ram > ram) why = "it needs ~" + gib(need_ram) + " of RAM" + (tmp ? " (pool on tmpfs included)" : "") + ", MemAvailable is " + gib(ram);
      if (why.empty()) {
        keep.push_back(idx);
      } else {
        notes.push_back("skipped " + idx + " in " + inv.id + ": " + why);
      }
    }
    inv.indexes = keep;
  }
}

}  // namespace pmindex::cli::study

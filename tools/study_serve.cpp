// A study's `kind = "serve"` run: `pmindex serve` over each index, on a
// loopback port it picks itself, under a bounded load from pmindex_mcload
// (server/mcload.cpp: SETs of every key, then GETs, as mc-benchmark does in
// the WORT evaluation).
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <thread>

#include "cli.hpp"
#include "pmindex/error.hpp"
#include "study_run.hpp"

extern char** environ;

namespace pmindex::cli::study {

namespace json = bench::json;

namespace {

// The load generator: server/mcload.cpp (pmindex_mcload, built with the
// server), beside this binary in a build tree, or PMINDEX_MCLOAD.
std::string find_mcload(const std::string& self) {
  if (const char* e = std::getenv("PMINDEX_MCLOAD"); e && *e) return e;
  std::string dir = self.substr(0, self.rfind('/'));
  for (const std::string& p : {dir + "/server/pmindex_mcload", dir + "/pmindex_mcload"})
    if (access(p.c_str(), X_OK) == 0) return p;
  return "";
}

}  // namespace

std::vector<json::value> run_serve(const invocation& inv, const run_settings& rs, uint64_t repetitions,
                                   std::vector<std::string>& notes) {
  uint64_t n = inv.records ? inv.records : 10000;
  unsigned clients = static_cast<unsigned>(inv.threads ? inv.threads : 1);
  uint32_t value_size = 8;
  std::string mode;
  std::vector<std::string> extra;  // options the server takes as they are
  for (auto& [k, v] : inv.options) {
    if (k == "value-size") value_size = static_cast<uint32_t>(std::stoul(v));
    else if (k == "mode") mode = v;
    else if (k == "pm-write-ns" || k == "flush" || k == "params" || k == "pool-size") extra.insert(extra.end(), {"--" + k, v});
  }
  std::vector<json::value> out;
  const std::string mcload = find_mcload(rs.self);
  if (mcload.empty()) {
    notes.push_back(inv.id + ": no pmindex_mcload beside " + rs.self +
                    " (it is built with the server, server/mcload.cpp; or set PMINDEX_MCLOAD): not run");
    return out;
  }
  const unsigned cores = std::max(1u, std::thread::hardware_concurrency());
  for (uint64_t rep = 0; rep < std::max<uint64_t>(repetitions, 1); ++rep)
    for (auto& idx : inv.indexes) {
      std::string stem = rs.out_dir + "/raw/" + inv.id + "." + idx + ".r" + std::to_string(rep);
      std::string pool = rs.pool_dir + "/pmindex-study-serve-" + std::to_string(getpid()) + ".pool";
      std::string ready = stem + ".port";
      std::remove(ready.c_str());
      std::remove(pool.c_str());
      std::vector<std::string> a = {rs.self, "serve", "--index", idx, "--pool", pool, "--listen", "127.0.0.1:0",
                                    "--ready-file", ready, "--threads", std::to_string(clients)};
      if (!mode.empty()) a.insert(a.end(), {"--mode", mode});
      a.insert(a.end(), extra.begin(), extra.end());
      bool has_size = false;
      for (auto& e : extra) has_size |= e == "--pool-size";
      if (!has_size)
        a.insert(a.end(), {"--pool-size", std::to_string(std::max<uint64_t>(256ull << 20, n * (value_size + 512) * 2))});
      std::vector<char*> cargv;
      for (auto& s : a) cargv.push_back(const_cast<char*>(s.c_str()));
      cargv.push_back(nullptr);
      posix_spawn_file_actions_t fa;
      posix_spawn_file_actions_init(&fa);
      posix_spawn_file_actions_addopen(&fa, 1, (stem + ".txt").c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
      posix_spawn_file_actions_addopen(&fa, 2, (stem + ".err").c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
      pid_t pid;
      int rc = posix_spawn(&pid, cargv[0], &fa, nullptr, cargv.data(), environ);
      posix_spawn_file_actions_destroy(&fa);
      if (rc != 0) throw error(errc::io, "cannot start the server: " + std::string(std::strerror(rc)));
      int port = 0;
      for (int i = 0; i < 600 && !port; ++i) {  // up to a minute (ASan builds start slowly)
        std::ifstream f(ready);
        if (!(f >> port)) port = 0;
        int st;
        if (!port && waitpid(pid, &st, WNOHANG) == pid) {
          pid = -1;
          break;
        }
        if (!port) std::this_thread::sleep_for(std::chrono::milliseconds(100));
      }
      auto stop = [&] {
        if (pid > 0) {
          kill(pid, SIGTERM);
          int st;
          waitpid(pid, &st, 0);
        }
        std::remove(pool.c_str());
        std::remove(ready.c_str());
      };
      if (!port) {
        stop();
        std::ifstream ef(stem + ".err");
        std::string why;
        std::getline(ef, why);
        notes.push_back(inv.id + ": " + idx + ": the server did not start" + (why.empty() ? "" : ": " + why));
        continue;
      }
      // The load: every key SET once, then GET once, `clients` connections.
      std::vector<std::string> load = {mcload, "--port", std::to_string(port), "--conns", std::to_string(clients),
                                       "--threads", std::to_string(std::min(clients, cores)), "--requests",
                                       std::to_string(n), "--keyspace", std::to_string(n), "--value-size",
                                       std::to_string(value_size), "--phases", "set,get", "--sequential", "1",
                                       "--label", idx};
      int lrc = run_child(load, stem + ".load.json", stem + ".load.err");
      std::ifstream lf(stem + ".load.json");
      for (std::string line; std::getline(lf, line);) {
        if (line.empty()) continue;
        json::value ph;
        try {
          ph = json::parse(line);
        } catch (const error&) {
          continue;
        }
        double secs = 0, req = 0, hits = 0, p50 = 0, p99 = 0;
        auto num = [&](const char* k, double& x) {
          if (auto* v = json::find(ph, k); v && v->is_number()) x = json::num(*v);
        };
        num("seconds", secs);
        num("requests", req);
        num("hits", hits);
        num("p50_us", p50);
        num("p99_us", p99);
        const bool get = json::find(ph, "phase") && json::str(*json::find(ph, "phase")) == "get";
        auto r = json::value::object();
        r["index"] = idx;
        r["workload"] = get ? "memcached-get" : "memcached-set";
        r["mode"] = mode.empty() ? "persist" : mode;
        r["parallel"] = "shared";
        r["threads"] = clients;
        r["dataset"] = "memcached";
        r["value_size"] = value_size;
        r["repetition"] = rep;
        auto w = json::value::object();
        w["records"] = n;
        w["distribution"] = "sequential";
        r["workload_spec"] = w;
        auto run = json::value::object();
        run["wall_seconds"] = secs;
        run["ops"] = req;
        if (get) run["succeeded"] = hits;
        run["mops"] = secs > 0 ? req / secs / 1e6 : 0.0;
        auto lat = json::value::object();
        lat["p50"] = p50 * 1000;
        lat["p99"] = p99 * 1000;
        run["latency_ns"] = lat;
        r["run"] = run;
        out.push_back(r);
        if (get && hits < req)
          notes.push_back(inv.id + ": " + idx + ": " + std::to_string(static_cast<uint64_t>(req - hits)) + " of " +
                          std::to_string(static_cast<uint64_t>(req)) + " GETs missed");
      }
      if (lrc != 0)
        notes.push_back(inv.id + ": " + idx + ": pmindex_mcload exited " + std::to_string(lrc) + " (see " + stem +
                        ".load.err)");
      stop();
    }
  return out;
}

}  // namespace pmindex::cli::study

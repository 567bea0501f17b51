// pmindex study list | run NAME [--scale smoke|default|paper] [--out DIR]
// [--only PART[,PART]] [--repetitions R] [--pool-dir DIR] [--resume] [--plugin NAME=PATH[,...]]: one paper's
// evaluation, declared in studies/NAME.toml, run with one command
// (docs/studies.md). The runs go through `pmindex bench --json` as child
// processes of this binary: each run gets a fresh process (no state carried
// from one index to the next, as separate bench commands would have), its
// exact command line is recorded and can be rerun alone, and the result
// files are the ones `pmindex compare` and `pmindex report` read.
#include <dirent.h>
#include <unistd.h>

#include <algorithm>
#include <climits>
#include <cstdio>
#include <set>
#include <string>
#include <vector>

#include "commands.hpp"
#include "pmindex/error.hpp"
#include "pmindex/index.hpp"
#include "study.hpp"
#include "study_run.hpp"

#ifndef PMINDEX_SOURCE_DIR
#define PMINDEX_SOURCE_DIR ""
#endif

namespace pmindex::cli {

namespace {

bool known_index(const std::string& name) { return find_index(name) != nullptr; }

// Where the studies are: PMINDEX_STUDIES, else the source tree's studies/.
std::string studies_dir() {
  if (const char* d = std::getenv("PMINDEX_STUDIES"); d && *d) return d;
  return std::string(PMINDEX_SOURCE_DIR) + "/studies";
}

std::vector<std::string> study_names(const std::string& dir) {
  std::vector<std::string> names;
  if (DIR* d = opendir(dir.c_str())) {
    while (auto* e = readdir(d)) {
      std::string n = e->d_name;
      if (n.size() > 5 && n.compare(n.size() - 5, 5, ".toml") == 0) names.push_back(n.substr(0, n.size() - 5));
    }
    closedir(d);
  }
  std::sort(names.begin(), names.end());
  return names;
}

// NAME (a study of the studies directory) or a path to a .toml file.
std::string study_path(const std::string& name) {
  if (name.find('/') != std::string::npos || (name.size() > 5 && name.compare(name.size() - 5, 5, ".toml") == 0)) {
    if (access(name.c_str(), R_OK) != 0) throw error(errc::usage, "cannot read study file " + name);
    return name;
  }
  std::string dir = studies_dir();
  std::string p = dir + "/" + name + ".toml";
  if (access(p.c_str(), R_OK) == 0) return p;
  std::string known;
  for (auto& n : study_names(dir)) known += (known.empty() ? "" : ", ") + n;
  throw error(errc::usage, "unknown study '" + name + "' (" + (known.empty() ? "no studies in " + dir : known) + ")");
}

std::string self_path() {
  char buf[PATH_MAX];
  ssize_t n = readlink("/proc/self/exe", buf, sizeof buf - 1);
  if (n <= 0) throw error(errc::io, "cannot find this program (/proc/self/exe)");
  return std::string(buf, static_cast<size_t>(n));
}

// The non-empty items of a comma-separated option value.
std::vector<std::string> comma_items(const std::string& list) {
  std::vector<std::string> out;
  for (size_t p = 0; p < list.size();) {
    size_t e = list.find(',', p);
    if (e == std::string::npos) e = list.size();
    if (e > p) out.push_back(list.substr(p, e - p));
    p = e + 1;
  }
  return out;
}

// --plugin NAME=PATH[,NAME=PATH...]: PiBench wrappers (an original
// authors' index, built by the user) added to the study's own [[plugin]]s
// without editing its file; each then runs beside the built-in indexes in
// every bench run that takes plugins.
void add_plugins(study::study_spec& s, const std::string& list, const std::string& abi) {
  if (abi != "master" && abi != "bulk") throw error(errc::usage, "unknown --plugin-abi '" + abi + "' (master, bulk)");
  for (const std::string& item : comma_items(list)) {
    const size_t eq = item.find('=');
    if (eq == std::string::npos || eq == 0 || eq + 1 == item.size())
      throw error(errc::usage, "--plugin wants NAME=PATH (a label for its cells, a PiBench wrapper), not '" + item + "'");
    study::plugin_spec pl{item.substr(0, eq), item.substr(eq + 1), abi};
    if (!plugin_label_ok(pl.name))
      throw error(errc::usage, "--plugin " + pl.name + ": a name is letters, digits, '-', '_' and '.'");
    if (known_index(pl.name)) throw error(errc::usage, "--plugin " + pl.name + ": the name of a built-in index");
    for (auto& q : s.plugins)
      if (q.name == pl.name) throw error(errc::usage, "--plugin " + pl.name + ": study " + s.name + " has a plugin of that name");
    if (access(pl.path.c_str(), R_OK) != 0)
      throw error(errc::usage, "--plugin " + pl.name + ": cannot read " + pl.path);
    s.plugins.push_back(pl);
  }
}

}  // namespace

int cmd_study(args& a) {
  // The subcommand and NAME arrive as --sub / --name (see pmindex.cpp).
  std::string sub = a.str("sub", "");
  std::string name = a.str("name", "");
  if (sub == "list") {
    a.finish();
    std::string dir = studies_dir();
    auto names = study_names(dir);
    if (names.empty()) throw error(errc::missing_file, "no studies in " + dir + " (set PMINDEX_STUDIES)");
    for (auto& n : names) {
      try {
        auto s = study::load_study(dir + "/" + n + ".toml", known_index);
        std::printf("%-12s %s (%s): parts", n.c_str(), s.title.c_str(), s.paper.c_str());
        for (size_t i = 0; i < s.parts.size(); ++i) std::printf("%s %s", i ? "," : "", s.parts[i].name.c_str());
        std::printf("; %zu findings, %zu published figures\n", s.findings.size(), s.published.size());
      } catch (const error& e) {
        std::printf("%-12s (invalid: %s)\n", n.c_str(), e.what());
      }
    }
    return 0;
  }
  // run's options are read before the subcommand is checked, so that
  // `pmindex study --help` and `--describe-options` list them.
  study::run_settings rs;
  rs.scale = a.str("scale", "default");
  rs.out_dir = a.str("out", "");
  std::string only = a.str("only", "");
  rs.repetitions = a.u64("repetitions", 0, 0, 1000);
  rs.pool_dir = a.str("pool-dir", "/dev/shm");
  rs.resume = a.flag("resume");
  const std::string plugins = a.str("plugin", "");
  const std::string plugin_abi = a.str("plugin-abi", "master");
  a.finish();
  if (sub != "run")
    throw error(errc::usage,
                "usage: pmindex study list | pmindex study run NAME [--scale smoke|default|paper] [--out DIR] "
                "[--only PART[,PART]] [--repetitions R] [--pool-dir DIR] [--resume] [--plugin NAME=PATH[,...]]");
  if (name.empty()) throw error(errc::usage, "pmindex study run needs a study NAME (pmindex study list)");
  if (std::find(study::k_scales.begin(), study::k_scales.end(), rs.scale) == study::k_scales.end())
    throw error(errc::usage, "unknown --scale '" + rs.scale + "' (smoke, default, paper)");
  auto s = study::load_study(study_path(name), known_index);
  for (const std::string& part : comma_items(only)) {
    bool found = false;
    for (auto& x : s.parts) found |= x.name == part;
    if (!found) {
      std::string known;
      for (auto& x : s.parts) known += (known.empty() ? "" : ", ") + x.name;
      throw error(errc::usage, "study " + s.name + " has no part '" + part + "' (" + known + ")");
    }
    rs.only.insert(part);
  }
  add_plugins(s, plugins, plugin_abi);
  if (rs.out_dir.empty()) rs.out_dir = "study-" + s.name;
  rs.self = self_path();
  rs.command = "pmindex study run " + name + " --scale " + rs.scale + " --out " + rs.out_dir;
  if (!only.empty()) rs.command += " --only " + only;
  if (rs.repetitions) rs.command += " --repetitions " + std::to_string(rs.repetitions);
  if (rs.pool_dir != "/dev/shm") rs.command += " --pool-dir " + rs.pool_dir;
  if (rs.resume) rs.command += " --resume";
  if (!plugins.empty()) rs.command += " --plugin " + plugins;
  if (plugin_abi != "master") rs.command += " --plugin-abi " + plugin_abi;
  return study::run_study(s, rs);
}

}  // namespace pmindex::cli

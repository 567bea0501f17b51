#include "sysinfo.hpp"

#include <sys/utsname.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <fstream>
#include <thread>

#include "pmindex/pm/mode.hpp"

#ifndef PMINDEX_SOURCE_DIR
#define PMINDEX_SOURCE_DIR ""
#endif
#ifndef PMINDEX_GIT_COMMIT
#define PMINDEX_GIT_COMMIT "unknown"
#endif
#ifndef PMINDEX_BUILD_TYPE
#define PMINDEX_BUILD_TYPE "unknown"
#endif
#ifndef PMINDEX_CXX_FLAGS
#define PMINDEX_CXX_FLAGS ""
#endif

namespace pmindex::bench {

std::string cpu_model() {
  std::ifstream f("/proc/cpuinfo");
  std::string line;
  while (std::getline(f, line))
    if (line.rfind("model name", 0) == 0) {
      auto p = line.find(':');
      if (p != std::string::npos) return line.substr(line.find_first_not_of(' ', p + 1));
    }
  return "unknown";
}

std::string host_name() {
  char b[256] = {};
  if (gethostname(b, sizeof b - 1) != 0) return "unknown";
  return b;
}

namespace {
std::string run(const std::string& cmd) {
  FILE* p = popen(cmd.c_str(), "r");
  if (!p) return {};
  std::string out;
  char buf[256];
  while (std::fgets(buf, sizeof buf, p)) out += buf;
  if (pclose(p) != 0) return {};
  while (!out.empty() && (out.back() == '\n' || out.back() == ' ')) out.pop_back();
  return out;
}
}  // namespace

std::string git_commit() {
  static const std::string v = [] {
    if (const char* e = std::getenv(k_commit_env); e && *e) return std::string(e);
    std::string dir = PMINDEX_SOURCE_DIR;
    if (!dir.empty() && dir.find('\'') == std::string::npos) {
      std::string c = run("git -C '" + dir + "' rev-parse HEAD 2>/dev/null");
      if (c.size() == 40) {
        std::string dirty = run("git -C '" + dir + "' status --porcelain --untracked-files=no 2>/dev/null");
        return dirty.empty() ? c : c + "-dirty";
      }
    }
    return std::string(PMINDEX_GIT_COMMIT);
  }();
  return v;
}

json::value context() {
  auto c = json::value::object();
  char date[64];
  std::time_t now = std::time(nullptr);
  std::strftime(date, sizeof date, "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&now));
  c["date"] = date;
  c["host"] = host_name();
  struct utsname u;
  if (uname(&u) == 0) c["kernel"] = std::string(u.sysname) + " " + u.release;
  c["cpu"] = cpu_model();
  c["cores"] = static_cast<unsigned>(std::thread::hardware_concurrency());
  c["flush_instruction"] = std::string(pm::to_string(pm::best_flush()));
  c["build_type"] = PMINDEX_BUILD_TYPE;
#if defined(__clang__)
  c["compiler"] = "clang " __clang_version__;
#elif defined(__GNUC__)
  c["compiler"] = "gcc " __VERSION__;
#endif
  c["flags"] = PMINDEX_CXX_FLAGS;
#ifdef PMINDEX_ASSERTS
  c["asserts"] = true;
#else
  c["asserts"] = false;
#endif
  c["git_commit"] = git_commit();
  return c;
}

}  // namespace pmindex::bench

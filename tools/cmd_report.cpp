// pmindex report RESULTS.json... [--out DIR] [--title T]: figures and an
// HTML page from `bench --json` files. The report is Python (matplotlib):
// this verb runs python/pmindex/report.py of the source tree the binary was
// built from, or else the installed package's `python3 -m pmindex.report`
// (pip install ./python), with the same arguments. PMINDEX_PYTHON names the
// interpreter (default python3).
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "commands.hpp"
#include "pmindex/error.hpp"

#ifndef PMINDEX_SOURCE_DIR
#define PMINDEX_SOURCE_DIR ""
#endif

namespace pmindex::cli {

int cmd_report(args& a) {
  std::vector<std::string> files;
  std::string all = a.joined("results", '\n');
  for (size_t p = 0; !all.empty() && p <= all.size();) {
    size_t e = all.find('\n', p);
    if (e == std::string::npos) e = all.size();
    files.push_back(all.substr(p, e - p));
    p = e + 1;
  }
  std::string out = a.str("out", "");
  std::string title = a.str("title", "");
  a.finish();
  if (files.empty())
    throw error(errc::usage, "usage: pmindex report RESULTS.json... [--out DIR] [--title T]");

  const char* env = std::getenv("PMINDEX_PYTHON");
  std::string python = env && *env ? env : "python3";
  std::vector<std::string> argv = {python};
  std::string script = std::string(PMINDEX_SOURCE_DIR) + "/python/pmindex/report.py";
  if (*PMINDEX_SOURCE_DIR && access(script.c_str(), R_OK) == 0) {
    argv.push_back(script);
  } else {
    argv.insert(argv.end(), {"-m", "pmindex.report"});
  }
  argv.insert(argv.end(), files.begin(), files.end());
  if (!out.empty()) argv.insert(argv.end(), {"--out", out});
  if (!title.empty()) argv.insert(argv.end(), {"--title", title});
  std::vector<char*> cargv;
  for (auto& s : argv) cargv.push_back(s.data());
  cargv.push_back(nullptr);
  execvp(cargv[0], cargv.data());
  throw error(errc::unsupported,
              "pmindex report runs " + python + " (matplotlib): " + std::strerror(errno) +
                  " (install python3 and `pip install matplotlib`, or set PMINDEX_PYTHON)");
}

}  // namespace pmindex::cli

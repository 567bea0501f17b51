#include "bench_pmemids.hpp"

#include <cinttypes>
#include <map>
#include <string>
#include <tuple>
#include <vector>

#include "pmindex/pm/mode.hpp"
#include "repeat.hpp"

namespace pmindex::cli {

namespace {

constexpr pm::mode k_modes[] = {pm::mode::dram, pm::mode::volatile_, pm::mode::persist, pm::mode::tx};

// A cell's figures: medians over its repetitions.
struct cell {
  double ktps = -1;
  double flushes = 0, fences = 0;
  std::vector<double> ktps_runs, flushes_runs, fences_runs;
};

// "read" for a workload without writes, else "write" (pmemids-read /
// pmemids-write, or what --workload gave instead).
bool is_read(const bench::run_result& r) {
  for (unsigned i = 0; i < bench::k_nops; ++i)
    if (i != static_cast<unsigned>(bench::op_type::read) && r.cfg.w.mix[i] > 0) return false;
  return true;
}

void print_ktps(FILE* f, const cell& c) {
  if (c.ktps < 0)
    std::fprintf(f, " %9s", "-");
  else
    std::fprintf(f, " %9.0f", c.ktps);
}

}  // namespace

void print_pmemids_table(FILE* f, const std::vector<bench::run_result>& rs) {
  // (index, threads) in first-seen order -> (read?, mode) -> cell
  std::vector<std::pair<std::string, uint32_t>> rows;
  std::map<std::tuple<std::string, uint32_t, bool, pm::mode>, cell> cells;
  for (auto& r : rs) {
    if (r.failed || !r.all.done) continue;
    auto key = std::make_pair(r.label, r.cfg.threads);
    bool seen = false;
    for (auto& x : rows) seen |= x == key;
    if (!seen) rows.push_back(key);
    cell& c = cells[{r.label, r.cfg.threads, is_read(r), r.cfg.base.mode.value_or(pm::mode::persist)}];
    c.ktps_runs.push_back(r.mops * 1000);
    c.flushes_runs.push_back(static_cast<double>(r.all.flushes) / static_cast<double>(r.all.done));
    c.fences_runs.push_back(static_cast<double>(r.all.fences) / static_cast<double>(r.all.done));
    c.ktps = bench::summarize(c.ktps_runs).median;
    c.flushes = bench::summarize(c.flushes_runs).median;
    c.fences = bench::summarize(c.fences_runs).median;
  }
  if (rows.empty()) return;
  const auto& c0 = rs.front().cfg;
  std::fprintf(f,
               "\npmemids grid (%" PRIu64 " records, %u-byte values): KTPS (thousands of operations/s, all "
               "threads), then flushes/fences per write op\n",
               c0.records, c0.value_size);
  std::fprintf(f, "%-12s %7s", "", "");
  std::fprintf(f, " %-39s %-39s %s\n", "---------------- read ----------------",
               "---------------- write ---------------", "write flushes/fences");
  std::fprintf(f, "%-12s %7s", "index", "threads");
  for (int rw = 0; rw < 2; ++rw)
    for (auto m : k_modes) std::fprintf(f, " %9s", std::string(pm::to_string(m)).c_str());
  std::fprintf(f, "  %11s %11s\n", "persist", "tx");
  for (auto& [name, threads] : rows) {
    std::fprintf(f, "%-12s %7u", name.c_str(), threads);
    for (bool read : {true, false})
      for (auto m : k_modes) {
        auto it = cells.find({name, threads, read, m});
        print_ktps(f, it == cells.end() ? cell{} : it->second);
      }
    for (auto m : {pm::mode::persist, pm::mode::tx}) {
      auto it = cells.find({name, threads, false, m});
      if (it == cells.end())
        std::fprintf(f, "  %11s", "-");
      else
        std::fprintf(f, "  %5.2f/%-5.2f", it->second.flushes, it->second.fences);
    }
    std::fprintf(f, "\n");
  }
}

}  // namespace pmindex::cli

// Repetitions of `pmindex bench`: the interleaved order of the cells, the
// aggregates (median, mean, stddev, cv, min, max) and what the command line
// writes with --repetitions; `pmindex compare`'s noise marker; record counts
// with decimal suffixes.
#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include "json.hpp"
#include "repeat.hpp"
#include "substrate_util.hpp"

namespace pmindex::bench {
namespace {

std::vector<std::pair<uint32_t, size_t>> pairs(const std::vector<slot>& v) {
  std::vector<std::pair<uint32_t, size_t>> out;
  for (auto& s : v) out.emplace_back(s.repetition, s.cell);
  return out;
}

TEST(BenchRepeat, OneRepetitionRunsThePlanInOrder) {
  EXPECT_EQ(pairs(interleaved_order(4, 1)),
            (std::vector<std::pair<uint32_t, size_t>>{{0, 0}, {0, 1}, {0, 2}, {0, 3}}));
  EXPECT_TRUE(interleaved_order(0, 3).empty());
}

TEST(BenchRepeat, RepetitionRStartsAtCellRModN) {
  EXPECT_EQ(pairs(interleaved_order(3, 4)), (std::vector<std::pair<uint32_t, size_t>>{{0, 0},
                                                                                      {0, 1},
                                                                                      {0, 2},
                                                                                      {1, 1},
                                                                                      {1, 2},
                                                                                      {1, 0},
                                                                                      {2, 2},
                                                                                      {2, 0},
                                                                                      {2, 1},
                                                                                      {3, 0},
                                                                                      {3, 1},
                                                                                      {3, 2}}));
}

TEST(BenchRepeat, EveryCellOncePerRepetitionAndRepetitionsInOrder) {
  for (size_t n : {1u, 2u, 5u, 7u})
    for (uint32_t reps : {1u, 2u, 3u, 9u}) {
      auto o = interleaved_order(n, reps);
      ASSERT_EQ(o.size(), n * reps);
      std::map<uint32_t, std::set<size_t>> seen;
      for (size_t i = 0; i < o.size(); ++i) {
        EXPECT_EQ(o[i].repetition, i / n) << "repetitions do not overlap";
        EXPECT_TRUE(seen[o[i].repetition].insert(o[i].cell).second) << "cell twice in one repetition";
      }
      for (uint32_t r = 0; r < reps; ++r) {
        EXPECT_EQ(seen[r].size(), n);
        EXPECT_EQ(o[r * n].cell, r % n) << "n=" << n << " r=" << r;
      }
    }
}

TEST(BenchRepeat, SummaryOfOddCount) {
  const summary s = summarize({3, 1, 2});
  EXPECT_EQ(s.n, 3u);
  EXPECT_DOUBLE_EQ(s.median, 2);
  EXPECT_DOUBLE_EQ(s.mean, 2);
  EXPECT_DOUBLE_EQ(s.stddev, 1);  // sample standard deviation (n - 1)
  EXPECT_DOUBLE_EQ(s.cv, 0.5);
  EXPECT_DOUBLE_EQ(s.min, 1);
  EXPECT_DOUBLE_EQ(s.max, 3);
}

TEST(BenchRepeat, SummaryOfEvenCountSingleValueAndZeroMean) {
  const summary e = summarize({10, 1, 4, 2});
  EXPECT_DOUBLE_EQ(e.median, 3);
  EXPECT_DOUBLE_EQ(e.mean, 4.25);
  EXPECT_NEAR(e.stddev, 4.031128874, 1e-9);
  const summary one = summarize({7});
  EXPECT_DOUBLE_EQ(one.median, 7);
  EXPECT_DOUBLE_EQ(one.stddev, 0);
  EXPECT_DOUBLE_EQ(one.cv, 0);
  const summary zero = summarize({-1, 1});
  EXPECT_DOUBLE_EQ(zero.mean, 0);
  EXPECT_DOUBLE_EQ(zero.cv, 0);
  EXPECT_EQ(summarize({}).n, 0u);
}

TEST(BenchRepeat, MedianAndSpreadText) {
  EXPECT_EQ(median_and_spread(summarize({12.31, 11.9, 12.8}), "%.1f"), "12.3 (11.9-12.8)");
  EXPECT_EQ(median_and_spread(summarize({1.001, 1.004}), "%.2f"), "1.00");  // equal once printed
  EXPECT_EQ(median_and_spread(summarize({5}), "%.0f"), "5");
}

json::value fake_run(const std::string& index, const std::string& workload, uint64_t cell, uint32_t rep,
                     double mops) {
  auto r = json::value::object();
  r["index"] = index;
  r["workload"] = workload;
  r["mode"] = "dram";
  r["parallel"] = "shared";
  r["threads"] = 1;
  r["cell"] = index + " " + workload + " dram shared t1";
  r["cell_index"] = cell;
  r["repetition"] = rep;
  auto spec = json::value::object();
  spec["records"] = 1000;
  r["workload_spec"] = spec;
  auto run = json::value::object();
  run["mops"] = mops;
  r["run"] = run;
  return r;
}

TEST(BenchRepeat, AggregatesPerCellAndFigure) {
  std::vector<json::value> runs = {fake_run("a", "w", 0, 0, 1), fake_run("b", "w", 1, 0, 10),
                                   fake_run("b", "w", 1, 1, 30), fake_run("a", "w", 0, 1, 2),
                                   fake_run("a", "w", 0, 2, 6),  fake_run("b", "w", 1, 2, 20)};
  const json::value agg = aggregates(runs);
  ASSERT_EQ(json::items(agg).size(), 2u);
  const json::value& a = json::items(agg)[0];
  EXPECT_EQ(json::str(a.at("cell")), "a w dram shared t1");
  EXPECT_EQ(json::num(a.at("repetitions")), 3);
  EXPECT_EQ(json::str(a.at("index")), "a");
  const json::value* m = json::find(a.at("figures"), "run.mops");
  ASSERT_TRUE(m);
  EXPECT_DOUBLE_EQ(json::num(m->at("median")), 2);
  EXPECT_DOUBLE_EQ(json::num(m->at("mean")), 3);
  EXPECT_DOUBLE_EQ(json::num(m->at("min")), 1);
  EXPECT_DOUBLE_EQ(json::num(m->at("max")), 6);
  EXPECT_NEAR(json::num(m->at("stddev")), 2.645751311, 1e-9);
  EXPECT_NEAR(json::num(m->at("cv")), 2.645751311 / 3, 1e-9);
  // Parameters and the schedule are not figures.
  EXPECT_FALSE(json::find(a.at("figures"), "repetition"));
  EXPECT_FALSE(json::find(a.at("figures"), "cell_index"));
  EXPECT_FALSE(json::find(a.at("figures"), "threads"));
  EXPECT_FALSE(json::find(a.at("figures"), "workload_spec.records"));
  EXPECT_DOUBLE_EQ(json::num(json::items(agg)[1].at("figures").at("run.mops").at("median")), 20);
}

TEST(BenchRepeat, UniqueCellsSeparatesTwoCellsOfOneKey) {
  std::vector<json::value> runs = {fake_run("a", "w", 0, 0, 1), fake_run("a", "w", 1, 0, 2),
                                   fake_run("a", "w", 1, 1, 3), fake_run("a", "w", 0, 1, 4)};
  unique_cells(runs);
  EXPECT_EQ(json::str(runs[0].at("cell")), "a w dram shared t1");
  EXPECT_EQ(json::str(runs[1].at("cell")), "a w dram shared t1 #1");
  EXPECT_EQ(json::str(runs[2].at("cell")), "a w dram shared t1 #1");
  EXPECT_EQ(json::str(runs[3].at("cell")), "a w dram shared t1");
  EXPECT_EQ(group_by_cell(runs).size(), 2u);
}

// ------------------------------------------------------------ command line

std::string slurp(const std::string& path) {
  std::ifstream f(path);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

class BenchRepeatCli : public ::testing::Test {
 protected:
  std::string dir_ = "/dev/shm/pmindex-repeat-" + std::to_string(::getpid());
  void SetUp() override { ASSERT_EQ(::system(("mkdir -p " + dir_).c_str()), 0); }
  void TearDown() override { (void)::system(("rm -rf " + dir_).c_str()); }
  std::vector<std::string> bench_args(const std::string& json) {
    return {"bench", "--index", "stdmap,canary", "--workload", "read=1,update=1", "-n", "2K",
            "--ops", "2K", "-t", "1", "--no-progress", "--pool", dir_ + "/p.pool", "--json", json};
  }
};

TEST_F(BenchRepeatCli, ThreeRepetitionsWriteThreeRunsPerCellAndAggregates) {
  const std::string json_path = dir_ + "/r3.json";
  auto args = bench_args(json_path);
  args.insert(args.end(), {"--repetitions", "3"});
  std::string out;
  ASSERT_EQ(test::run_pmindex(args, &out), 0) << out;
  EXPECT_NE(out.find("3 repetitions: median (min-max)"), std::string::npos) << out;
  const json::value doc = json::parse(slurp(json_path));
  const auto& runs = json::items(doc.at("results"));
  ASSERT_EQ(runs.size(), 12u);  // 2 indexes x 2 workloads x 3 repetitions
  std::map<std::string, std::set<int>> reps_of;
  std::vector<int> order;
  for (auto& r : runs) {
    ASSERT_TRUE(json::find(r, "cell") && json::find(r, "repetition") && json::find(r, "cell_index"));
    reps_of[json::str(r.at("cell"))].insert(static_cast<int>(json::num(r.at("repetition"))));
    order.push_back(static_cast<int>(json::num(r.at("cell_index"))));
  }
  ASSERT_EQ(reps_of.size(), 4u);
  for (auto& [cell, reps] : reps_of) EXPECT_EQ(reps, (std::set<int>{0, 1, 2})) << cell;
  EXPECT_EQ(order, (std::vector<int>{0, 1, 2, 3, 1, 2, 3, 0, 2, 3, 0, 1}));  // rotated per repetition
  EXPECT_EQ(json::num(doc.at("context").at("options").at("repetitions")), 3);
  const auto& agg = json::items(doc.at("aggregates"));
  ASSERT_EQ(agg.size(), 4u);
  for (auto& a : agg) {
    EXPECT_EQ(json::num(a.at("repetitions")), 3);
    ASSERT_TRUE(reps_of.count(json::str(a.at("cell")))) << json::str(a.at("cell"));
    const json::value* m = json::find(a.at("figures"), "run.mops");
    ASSERT_TRUE(m);
    for (const char* k : {"median", "mean", "stddev", "cv", "min", "max"}) EXPECT_TRUE(json::find(*m, k)) << k;
    EXPECT_LE(json::num(m->at("min")), json::num(m->at("median")));
    EXPECT_LE(json::num(m->at("median")), json::num(m->at("max")));
  }
}

TEST_F(BenchRepeatCli, OneRepetitionKeepsTheTableAndMarksItsRuns) {
  const std::string json_path = dir_ + "/r1.json";
  std::string out;
  ASSERT_EQ(test::run_pmindex(bench_args(json_path), &out), 0) << out;
  EXPECT_EQ(out.find("repetitions"), std::string::npos) << out;
  std::istringstream lines(out);
  int rows = 0;
  for (std::string l; std::getline(lines, l);)
    if (l.rfind("stdmap ", 0) == 0 || l.rfind("canary ", 0) == 0) {
      ++rows;
      EXPECT_EQ(l.find('('), std::string::npos) << "a spread in a row of one run: " << l;
    }
  EXPECT_EQ(rows, 4) << out;
  const json::value doc = json::parse(slurp(json_path));
  ASSERT_EQ(json::items(doc.at("results")).size(), 4u);
  for (auto& r : json::items(doc.at("results"))) EXPECT_EQ(json::num(r.at("repetition")), 0);
  EXPECT_EQ(json::items(doc.at("aggregates")).size(), 4u);
}

TEST_F(BenchRepeatCli, RepetitionsOutOfRangeIsAUsageError) {
  auto args = bench_args(dir_ + "/x.json");
  args.insert(args.end(), {"--repetitions", "0"});
  EXPECT_EQ(test::run_pmindex(args), 2);
}

TEST_F(BenchRepeatCli, RecordCountsAreDecimalAndKeptAsTyped) {
  const std::string json_path = dir_ + "/n.json";
  std::string out;
  ASSERT_EQ(test::run_pmindex(bench_args(json_path), &out), 0) << out;
  EXPECT_NE(out.find("2000 records prefilled (2K: K/M/G/T are powers of 1000)"), std::string::npos) << out;
  const json::value doc = json::parse(slurp(json_path));
  const auto& opts = doc.at("context").at("options");
  EXPECT_EQ(json::num(opts.at("records")), 2000);
  EXPECT_EQ(json::str(opts.at("records_requested")), "2K");
  const auto& r = json::items(doc.at("results")).front();
  EXPECT_EQ(json::num(r.at("workload_spec").at("records")), 2000);
  EXPECT_EQ(json::str(r.at("workload_spec").at("records_requested")), "2K");
  EXPECT_EQ(json::num(r.at("load").at("records")), 2000);
  EXPECT_EQ(json::num(r.at("run").at("ops")), 2000);  // --ops 2K
  // Binary counts stay spellable.
  auto args = bench_args(json_path);
  *std::find(args.begin(), args.end(), "2K") = "2^11";  // -n 2^11
  ASSERT_EQ(test::run_pmindex(args, &out), 0) << out;
  EXPECT_EQ(json::num(json::parse(slurp(json_path)).at("context").at("options").at("records")), 2048);
}

// Two result files of one cell: A's runs 10, 11, 12; B's `b` (one run each).
void write_pair(const std::string& path, std::vector<double> mops) {
  auto doc = json::value::object();
  auto arr = json::value::array();
  for (size_t i = 0; i < mops.size(); ++i) arr.push_back(fake_run("x", "w", 0, static_cast<uint32_t>(i), mops[i]));
  doc["results"] = arr;
  std::ofstream(path) << json::dump(doc);
}

std::string mops_line(const std::string& out) {
  size_t p = out.find("  run.mops ");
  return p == std::string::npos ? "" : out.substr(p, out.find('\n', p) - p);
}

TEST_F(BenchRepeatCli, CompareMarksDifferencesWithinTheSpread) {
  const std::string a = dir_ + "/a.json", inside = dir_ + "/in.json", outside = dir_ + "/out.json";
  write_pair(a, {10, 11, 12});
  write_pair(inside, {11.5, 11.6, 11.7});
  write_pair(outside, {20, 21, 22});
  std::string out;
  ASSERT_EQ(test::run_pmindex({"compare", a, inside}, &out), 0) << out;
  std::string line = mops_line(out);
  EXPECT_NE(line.find("11 (10-12)"), std::string::npos) << out;
  EXPECT_NE(line.find("11.6 (11.5-11.7)"), std::string::npos) << out;
  EXPECT_NE(line.find("1.055 ~"), std::string::npos) << out;
  ASSERT_EQ(test::run_pmindex({"compare", a, outside}, &out), 0) << out;
  line = mops_line(out);
  EXPECT_NE(line.find("1.909"), std::string::npos) << out;
  EXPECT_EQ(line.find('~'), std::string::npos) << out;
  EXPECT_NE(out.find("(3 vs 3 runs)"), std::string::npos) << out;
}

}  // namespace
}  // namespace pmindex::bench

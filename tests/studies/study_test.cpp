// Study files and findings (tools/study_*.cpp, docs/studies.md): cells are
// grouped from bench results whatever their order, a metric's median and
// spread come from every repetition, each finding kind gives held / not held
// / not comparable, and a study file with a mistake is refused with a message
// naming the key.
#include <gtest/gtest.h>

#include <string>

#include "pmindex/error.hpp"
#include "study.hpp"

namespace pmindex::cli::study {
namespace {

namespace json = bench::json;

bool known(const std::string& name) { return name == "a" || name == "b" || name == "c"; }

json::value result(const std::string& index, const std::string& workload, double mops, int rep,
                   const std::string& threads = "1") {
  auto r = json::value::object();
  r["index"] = index;
  r["workload"] = workload;
  r["mode"] = "persist";
  r["threads"] = 1;
  r["repetition"] = rep;
  auto run = json::value::object();
  run["mops"] = mops;
  auto lat = json::value::object();
  lat["p99.9"] = mops * 10;
  run["latency_ns"] = lat;
  r["run"] = run;
  auto st = json::value::object();
  st["part"] = "p";
  st["run"] = "r";
  st["threads"] = threads;
  r["study"] = st;
  return r;
}

// Three repetitions each, interleaved as `bench --repetitions` runs them.
std::vector<json::value> sample() {
  std::vector<json::value> v;
  const double a[] = {10, 12, 11}, b[] = {5, 6, 4}, c[] = {9, 30, 10};
  for (int rep = 0; rep < 3; ++rep) {
    v.push_back(result("a", "read=1", a[rep], rep));
    v.push_back(result("b", "read=1", b[rep], rep));
    v.push_back(result("c", "read=1", c[rep], rep));
  }
  return v;
}

finding_spec ratio(double lo, double hi) {
  finding_spec f;
  f.id = "f";
  f.kind = "ratio";
  f.metric = "run.mops";
  f.where = {{"part", "p"}, {"workload", "read=1"}};
  f.a = {{"index", "a"}};
  f.b = {{"index", "b"}};
  f.lo = lo;
  f.hi = hi;
  return f;
}

TEST(StudyCells, GroupsRepetitionsByConfiguration) {
  auto rs = sample();
  auto cells = group_cells(rs);
  ASSERT_EQ(cells.size(), 3u);
  for (auto& c : cells) EXPECT_EQ(c.runs.size(), 3u);
  auto s = metric_stat(*select(cells, {{"index", "c"}})[0], "run.mops");
  EXPECT_EQ(s.n, 3u);
  EXPECT_DOUBLE_EQ(s.median, 10);
  EXPECT_DOUBLE_EQ(s.min, 9);
  EXPECT_DOUBLE_EQ(s.max, 30);
  // The study's label (threads as the file writes it) wins over the result's.
  EXPECT_EQ(cells[0].labels.at("threads"), "1");
  EXPECT_EQ(cells[0].labels.at("part"), "p");
}

TEST(StudyCells, MetricPathsKeepPercentileDots) {
  auto r = result("a", "read=1", 2, 0);
  double x = 0;
  ASSERT_TRUE(metric_of(r, "run.latency_ns.p99.9", x));
  EXPECT_DOUBLE_EQ(x, 20);
  EXPECT_FALSE(metric_of(r, "run.latency_ns.p50", x));
  EXPECT_FALSE(metric_of(r, "nothing", x));
}

TEST(StudyFindings, RatioHolds) {
  auto rs = sample();
  auto v = evaluate(ratio(1.5, 2.5), group_cells(rs));
  EXPECT_EQ(v.status, "held") << v.detail;
  EXPECT_DOUBLE_EQ(v.ratio, 11.0 / 5.0);
  EXPECT_DOUBLE_EQ(v.ratio_min, 10.0 / 6.0);  // spread: least a over greatest b
  EXPECT_DOUBLE_EQ(v.ratio_max, 12.0 / 4.0);
}

TEST(StudyFindings, RatioOutsideIsNotHeld) {
  auto rs = sample();
  EXPECT_EQ(evaluate(ratio(0.5, 1.5), group_cells(rs)).status, "not held");
  auto above = ratio(0, 0);
  above.kind = "above";
  above.bound = 3;
  EXPECT_EQ(evaluate(above, group_cells(rs)).status, "not held");
  above.kind = "below";
  EXPECT_EQ(evaluate(above, group_cells(rs)).status, "held");
}

TEST(StudyFindings, MissingCellIsNotComparable) {
  auto rs = sample();
  auto f = ratio(1, 3);
  f.b = {{"index", "b"}, {"threads", "all"}};  // never measured
  auto v = evaluate(f, group_cells(rs));
  EXPECT_EQ(v.status, "not comparable");
  EXPECT_NE(v.detail.find("threads=all"), std::string::npos) << v.detail;
  f = ratio(1, 3);
  f.metric = "space.pm_bytes_per_record";  // not in these results
  EXPECT_EQ(evaluate(f, group_cells(rs)).status, "not comparable");
}

TEST(StudyFindings, AmbiguousCellIsNotComparable) {
  auto rs = sample();
  rs.push_back(result("a", "scan=1", 1, 0));
  auto f = ratio(1, 3);
  f.where = {{"part", "p"}};  // index a now has two cells
  auto v = evaluate(f, group_cells(rs));
  EXPECT_EQ(v.status, "not comparable");
  EXPECT_NE(v.detail.find("2 cells"), std::string::npos) << v.detail;
}

TEST(StudyFindings, RankingWithTolerance) {
  auto rs = sample();
  finding_spec f;
  f.kind = "highest";
  f.metric = "run.mops";
  f.where = {{"part", "p"}};
  f.among = {"a", "b", "c"};
  f.index = "a";
  auto v = evaluate(f, group_cells(rs));
  EXPECT_EQ(v.status, "held") << v.detail;
  EXPECT_DOUBLE_EQ(v.ratio, 11.0 / 10.0);
  f.index = "c";  // 10 against a's 11: within 10%, not within 5%
  f.tolerance = 0.05;
  EXPECT_EQ(evaluate(f, group_cells(rs)).status, "not held");
  f.tolerance = 0.1;
  EXPECT_EQ(evaluate(f, group_cells(rs)).status, "held");
  f.kind = "lowest";
  f.index = "b";
  f.tolerance = 0;
  EXPECT_EQ(evaluate(f, group_cells(rs)).status, "held");
  f.index = "a";
  EXPECT_EQ(evaluate(f, group_cells(rs)).status, "not held");
  f.among = {"a"};  // nobody to compare with
  EXPECT_EQ(evaluate(f, group_cells(rs)).status, "not comparable");
}

const char* k_good = R"(
name = "t"
title = "T"
paper = "P"
[scale.smoke]
records = "1K"
repetitions = 2
[[part]]
name = "p"
title = "P"
[[part.run]]
name = "r"
indexes = ["a", "b"]
workloads = ["read=1", "scan=1"]
threads = [1, "all"]
records = { smoke = "2K", paper = "100M" }
recover = true
[[finding]]
id = "f"
statement = "a beats b"
source = "Table 1"
kind = "above"
metric = "run.mops"
where = { part = "p", threads = 1 }
a = { index = "a" }
b = { index = "b" }
bound = 1.0
)";

TEST(StudyFile, ReadsAGoodFile) {
  auto s = parse_study(k_good, "t.toml", known);
  EXPECT_EQ(s.name, "t");
  ASSERT_EQ(s.runs.size(), 1u);
  EXPECT_EQ(s.runs[0].indexes.size(), 2u);
  EXPECT_EQ(s.repetitions.at("smoke"), 2u);
  EXPECT_EQ(s.scale_defaults.at("smoke").at("records"), "1K");
  ASSERT_EQ(s.findings.size(), 1u);
  EXPECT_EQ(s.findings[0].where.at("threads"), "1");
  bool saw_records = false;
  for (auto& [k, v] : s.runs[0].options)
    if (k == "records") {
      saw_records = true;
      EXPECT_EQ(v.at("smoke"), std::vector<std::string>{"2K"});
      EXPECT_TRUE(v.at("default").empty());
    }
  EXPECT_TRUE(saw_records);
}

// A study file with one line changed must be refused with `needle` in the
// message (and the file name and line).
void expect_refused(const std::string& from, const std::string& to, const std::string& needle) {
  std::string text = k_good;
  auto at = text.find(from);
  ASSERT_NE(at, std::string::npos) << from;
  text.replace(at, from.size(), to);
  try {
    parse_study(text, "t.toml", known);
    FAIL() << "accepted: " << to;
  } catch (const error& e) {
    EXPECT_EQ(e.code(), errc::usage);
    EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
    EXPECT_EQ(std::string(e.what()).rfind("t.toml:", 0), 0u) << e.what();
    EXPECT_EQ(std::string(e.what()).find('\n'), std::string::npos) << e.what();
  }
}

TEST(StudyFile, RefusesMistakes) {
  expect_refused("recover = true", "recovr = true", "unknown key 'recovr' in part 'p' run 'r'");
  expect_refused(R"(indexes = ["a", "b"])", R"(indexes = ["a", "zz"])", "unknown index 'zz'");
  expect_refused(R"(indexes = ["a", "b"])", "", "needs 'indexes'");
  expect_refused(R"(a = { index = "a" })", R"(a = { index = "zz" })", "unknown index 'zz'");
  expect_refused(R"(a = { index = "a" })", R"(a = { colour = "a" })", "unknown cell label 'colour'");
  expect_refused(R"(kind = "above")", R"(kind = "bigger")", "unknown kind 'bigger'");
  expect_refused("bound = 1.0", "", "needs 'bound'");
  expect_refused(R"(where = { part = "p", threads = 1 })", R"(where = { part = "q" })", "unknown part 'q'");
  expect_refused("smoke = \"2K\"", "tiny = \"2K\"", "unknown scale 'tiny'");
  expect_refused("[scale.smoke]", "[scale.small]", "unknown scale 'small'");
  expect_refused("paper = \"P\"", "paper = \"P\"\ncolour = 1", "unknown key 'colour' in the study");
  expect_refused("title = \"T\"", "title = \"T", "t.toml:");
}

}  // namespace
}  // namespace pmindex::cli::study

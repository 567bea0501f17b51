// pmindex crashtest: the crash checker (src/crash/, docs/crash-checker.md).
//
//   pmindex crashtest --index NAME [--ops N] [--images M] [--threads T]
//       [--seed S] [--exhaustive] [--keys K] [--pool-size B] [--keyset K]
//       [--dataset D] [--value-size B] [--mode persist|tx]
//   pmindex crashtest --self-test [--index I]   (test builds: every registered mutant, or I's)
//
// Prints `crashtest <index>: <images> images, <violations> violations` and
// exits 0 only without violations (1 otherwise).
#include <sys/personality.h>
#include <unistd.h>

#include <cinttypes>
#include <cstdio>
#include <cstring>
#include <fstream>
// GCC 12 warns inside libstdc++'s regex compiler (-Wmaybe-uninitialized on
// a std::function of its own, a false positive); the warning is placed at the
// header's lines, so it is silenced for them only.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#include <regex>
#pragma GCC diagnostic pop
#include <set>
#include <iterator>
#include <memory>
#include <string>
#include <vector>

#include "commands.hpp"
#include "dataset.hpp"
#include "crash/crashtest.hpp"
#include "pmindex/error.hpp"
#include "index_tests.hpp"
#include "scratch_params.hpp"

namespace pmindex::cli {

namespace {

// Reproducible histories: an index may draw randomness from addresses (the
// canary seeds its level generator from a thread-local's address), so the
// checker runs with address-space randomisation off, re-executing itself
// once. Then the same command replays the same single-threaded history,
// event for event, and --point/--variant rebuild the same image.
void reexec_without_aslr() {
  int cur = personality(0xffffffff);
  if (cur == -1 || (cur & ADDR_NO_RANDOMIZE)) return;
  std::ifstream f("/proc/self/cmdline", std::ios::binary);
  std::string all((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  if (all.empty() || personality(static_cast<unsigned long>(cur | ADDR_NO_RANDOMIZE)) == -1) return;
  std::vector<char*> argv;
  for (size_t i = 0; i < all.size(); i += std::strlen(&all[i]) + 1) argv.push_back(&all[i]);
  argv.push_back(nullptr);
  std::fflush(nullptr);
  execv("/proc/self/exe", argv.data());
  personality(static_cast<unsigned long>(cur));  // exec failed: go on with randomisation
}

std::string reproduce_command(const crash::config& c) {
  std::string s = "pmindex crashtest --index " + c.index;
  if (!c.params.empty()) s += " --params " + c.params;
  s += " --ops " + std::to_string(c.ops) + " --keys " + std::to_string(c.keys) + " --seed " +
       std::to_string(c.seed) + " --pool-size " + std::to_string(c.pool_size);
  if (c.threads > 1) s += " --threads " + std::to_string(c.threads) + " --keyset " + c.keyset;
  if (c.dataset) s += " --dataset " + c.dataset->name;
  if (c.value_size != 8) s += " --value-size " + std::to_string(c.value_size);
  if (c.mode != pm::mode::persist) s += " --mode " + std::string(pm::to_string(c.mode));
  return s;
}

crash::result run_and_report(crash::config c, bool summary, bool stats = false) {
  c.command = reproduce_command(c);
  if (auto e = find_index(c.index); e && !e->concurrent && c.threads > 1 && !c.quiet)
    std::fprintf(stderr, "crashtest %s: a single-threaded index: the %u threads take one lock per operation\n",
                 c.index.c_str(), c.threads);
  auto r = crash::run(c);
  if (summary) {
    std::printf("crashtest %s: %" PRIu64 " images, %" PRIu64 " violations\n", c.index.c_str(), r.images,
                r.violations);
    if (stats) {  // e.g. which node kinds the history grew (tests/crash/wort_crash.cmake)
      std::printf("crashtest %s: index at the end of the history:", c.index.c_str());
      for (auto& [name, v] : r.final_stats) std::printf(" %s=%g", name.c_str(), v);
      std::printf("\n");
    }
    std::fflush(stdout);
  }
  if (!c.quiet && c.threads > 1)
    std::fprintf(stderr, "crashtest %s: %" PRIu64 " images taken with every other thread parked or blocked\n",
                 c.index.c_str(), r.images - r.unfrozen);
  if (!c.quiet && r.rechecked)
    std::fprintf(stderr, "crashtest %s: %" PRIu64 " image(s) whose child hung checked again (a lock another thread held at fork: docs/crash-checker.md)\n",
                 c.index.c_str(), r.rechecked);
  if (!c.quiet)
    std::fprintf(stderr,
                 "crashtest %s: %" PRIu64 " persistence events, %" PRIu64 " crash points, %.1f s, %.0f images/s "
                 "(seed %" PRIu64 ", %u thread%s)\n",
                 c.index.c_str(), r.events, r.crash_points, r.seconds, r.seconds > 0 ? r.images / r.seconds : 0.0,
                 c.seed, c.threads, c.threads > 1 ? "s" : "");
  return r;
}

// Reads the checker's options (everything but --self-test and --stats).
crash::config read_config(args& a) {
  crash::config c;
  c.index = a.str("index", c.index);
  c.params = a.joined("params", ',');
  if (auto e = find_index(c.index)) c.params = scratch_params(*e, c.params);  // (an array that fits the pool)
  c.ops = a.u64("ops", c.ops, 1, uint64_t{1} << 32);
  c.images = a.u64("images", c.images, 0, uint64_t{1} << 32);
  c.threads = static_cast<uint32_t>(a.u64("threads", c.threads, 1, 16));
  c.seed = a.u64("seed", c.seed, 0, UINT64_MAX);
  c.exhaustive = a.flag("exhaustive");
  c.keys = a.u64("keys", c.keys, 1, uint64_t{1} << 32);
  c.pool_size = a.u64("pool-size", c.pool_size, 1 << 20, uint64_t{1} << 40);
  c.keyset = a.str("keyset", c.keyset);
  if (auto m = pm::parse_mode(a.str("mode", "persist")); m == pm::mode::persist || m == pm::mode::tx)
    c.mode = *m;
  else
    throw error(errc::usage, "crashtest --mode must be persist or tx");
  c.child_timeout = static_cast<uint32_t>(a.u64("child-timeout", c.child_timeout, 1, 86400));
  c.max_violations = a.u64("max-violations", 0, 0, uint64_t{1} << 32);
  c.details = static_cast<uint32_t>(a.u64("details", c.details, 0, 1000000));
  c.save_dir = a.str("save-dir", c.save_dir);
  c.verbose = a.flag("verbose");
  c.quiet = a.flag("quiet");
  c.replay = a.has("point");
  c.replay_point = a.u64("point", 0, 0, uint64_t{1} << 62);
  c.replay_variant = a.u64("variant", 0, 0, UINT64_MAX);  // a selector over up to 64 lines, as printed
  if (c.threads == 0 || c.threads > 16) throw error(errc::usage, "--threads must be 1..16");
  if (auto name = a.str("dataset", ""); !name.empty()) {
    // Keys from a bench dataset (seeded like the history), values from
    // bench's value_bytes; see bench/dataset.hpp.
    std::shared_ptr<const bench::dataset> ds = bench::make_dataset(name, c.seed, bench::key_universe::sparse, /*quiet=*/true);
    c.dataset = crash::key_source{name, ds->integer_keys(), ds->size(), [ds](uint64_t id) {
                                    std::string buf;
                                    return std::string(ds->key(id, buf));
                                  }};
  }
  c.value_size = a.u64("value-size", c.value_size, 0, uint64_t{1} << 30);
  c.values = {[](uint64_t id, size_t size, std::string& out) { bench::value_bytes(id, size, out); },
              bench::value_matches};
  return c;
}

#ifdef PMINDEX_MUTANTS
// The params of a mutant's run without its `mutant=NAME` token: the same
// run (node sizes, key kinds, ...) on the correct code.
std::string without_mutant(const std::string& params) {
  std::string out;
  for (size_t i = 0, j; i <= params.size(); i = j + 1) {
    j = params.find(',', i);
    if (j == std::string::npos) j = params.size();
    std::string tok = params.substr(i, j - i);
    if (tok.empty() || tok.rfind("mutant=", 0) == 0) continue;
    out += (out.empty() ? "" : ",") + tok;
  }
  return out;
}

// Every crash-checker mutant of every registered index (or of `only`) must be
// caught with the violation its tests name (index_tests::mutants); the same
// runs without the mutant must pass. Mutants that share their run (the same
// params, ops, keys and seed once the mutant is taken out) share one clean run.
int self_test(const std::string& only) {
  int failures = 0;
  bool found = false;
  std::set<std::string> clean_runs;
  for (auto& e : registered_indexes()) {
    if (!only.empty() && e->name != only) continue;
    found = true;
    for (auto& m : find_index_tests(e->name).mutants) {
      if (m.checker != "crashtest") continue;
      std::vector<std::string> tokens = {"--index", e->name, "--params", "mutant=" + m.name};
      for (size_t i = 0, j; i < m.args.size(); i = j + 1) {
        j = m.args.find(' ', i);
        if (j == std::string::npos) j = m.args.size();
        if (j > i) tokens.push_back(m.args.substr(i, j - i));
      }
      args a("crashtest", tokens);
      crash::config c = read_config(a);
      a.finish();
      c.max_violations = 1;
      c.details = 1;
      c.quiet = true;
      c.print_violations = false;
      c.save_dir = "";
      c.command = reproduce_command(c);
      auto r = crash::run(c);
      std::regex want(m.message);
      bool caught = !r.messages.empty() && std::regex_search(r.messages.front(), want);
      std::printf("self-test: %s mutant %-28s %s\n", e->name.c_str(), m.name.c_str(),
                  caught ? "caught" : r.violations ? "caught, but not with its message" : "NOT CAUGHT");
      if (!r.messages.empty()) std::printf("  %s\n", r.messages.front().substr(0, 300).c_str());
      failures += !caught;
      c.params = without_mutant(c.params);
      c.max_violations = 0;
      c.command = reproduce_command(c);
      if (!clean_runs.insert(c.command).second) continue;  // this run was already clean
      auto clean = crash::run(c);
      std::printf("self-test: %s without the mutant: %" PRIu64 " images, %" PRIu64 " violations  [%s]\n",
                  e->name.c_str(), clean.images, clean.violations, c.command.c_str());
      failures += clean.violations != 0;
    }
  }
  if (!found) throw error(errc::usage, "unknown index '" + only + "' (see `pmindex list`)");
  std::printf("crashtest self-test: %s\n", failures ? "FAILED" : "every mutant caught, every index clean");
  return failures ? static_cast<int>(errc::failure) : 0;
}
#endif

}  // namespace

int cmd_crashtest(args& a) {
  reexec_without_aslr();
  bool self = a.flag("self-test");
  const std::string self_index = self && a.has("index") ? a.str("index", "") : "";
  const bool print_stats = a.flag("stats");
  crash::config c = read_config(a);
  a.finish();
  if (self) {
#ifdef PMINDEX_MUTANTS
    return self_test(self_index);
#else
    throw error(errc::unsupported,
                "--self-test needs a test build (cmake -DPMINDEX_TEST_BUILD=ON): the mutants are not compiled into "
                "this pmindex");
#endif
  }
  auto r = run_and_report(c, true, print_stats);
  return r.violations ? static_cast<int>(errc::failure) : 0;
}

}  // namespace pmindex::cli

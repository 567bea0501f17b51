// pmindex crashtest: the crash checker (src/crash/, docs/crash-checker.md).
//
//   pmindex crashtest --index NAME [--ops N] [--images M] [--threads T]
//       [--seed S] [--exhaustive] [--keys K] [--pool-size B] [--keyset K]
//   pmindex crashtest --self-test      (test builds: the canary mutants)
//
// Prints `crashtest <index>: <images> images, <violations> violations` and
// exits 0 only without violations (1 otherwise).
#include <sys/personality.h>
#include <unistd.h>

#include <cinttypes>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "commands.hpp"
#include "pmindex/crash/crashtest.hpp"
#include "pmindex/error.hpp"

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
  return s;
}

crash::result run_and_report(crash::config c, bool summary, bool stats = false) {
  c.command = reproduce_command(c);
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
  if (!c.quiet)
    std::fprintf(stderr,
                 "crashtest %s: %" PRIu64 " persistence events, %" PRIu64 " crash points, %.1f s, %.0f images/s "
                 "(seed %" PRIu64 ", %u thread%s)\n",
                 c.index.c_str(), r.events, r.crash_points, r.seconds, r.seconds > 0 ? r.images / r.seconds : 0.0,
                 c.seed, c.threads, c.threads > 1 ? "s" : "");
  return r;
}

#ifdef PMINDEX_MUTANTS
// Each canary mutant must be caught; the unmutated canary must pass.
int self_test(const crash::config& base) {
  struct run_spec {
    const char* what;
    uint32_t threads;
    bool exhaustive;
    uint64_t ops, images;
  };
  const run_spec specs[] = {
      {"random", 1, false, 300, 3000},
      {"exhaustive", 1, true, 40, 0},
      {"2 threads", 2, false, 300, 600},
  };
  const char* mutants[] = {"publish_before_flush", "flush_without_fence", "torn_16byte", "free_before_durable"};
  int failures = 0;
  for (const char* m : mutants) {
    bool caught = false;
    std::string how;
    for (uint64_t s = 0; s < 3 && !caught; ++s)
      for (auto& sp : specs) {
        crash::config c = base;
        c.index = "canary";
        c.params = std::string("mutant=") + m;
        c.threads = sp.threads;
        c.exhaustive = sp.exhaustive;
        c.ops = sp.ops;
        c.images = sp.images;
        c.seed = base.seed + s;
        c.max_violations = 1;
        c.details = 1;
        c.quiet = true;
        c.print_violations = false;
        c.save_dir = "";
        c.command = reproduce_command(c);
        auto r = crash::run(c);
        if (r.violations) {
          caught = true;
          how = std::string(sp.what) + ", seed " + std::to_string(c.seed) + ", after " + std::to_string(r.images) +
                " images: " + r.messages.front().substr(0, r.messages.front().find('\n'));
          break;
        }
      }
    std::printf("self-test: mutant %-22s %s\n", m, caught ? "caught" : "NOT CAUGHT");
    if (caught) std::printf("  %s\n", how.c_str());
    failures += !caught;
  }
  for (auto& sp : specs) {
    crash::config c = base;
    c.index = "canary";
    c.threads = sp.threads;
    c.exhaustive = sp.exhaustive;
    c.ops = sp.ops;
    c.images = sp.images;
    c.quiet = true;
    c.command = reproduce_command(c);
    auto r = crash::run(c);
    std::printf("self-test: canary (%s): %" PRIu64 " images, %" PRIu64 " violations\n", sp.what, r.images,
                r.violations);
    for (auto& msg : r.messages) std::printf("  %s\n", msg.c_str());
    failures += r.violations != 0;
  }
  std::printf("crashtest self-test: %s\n", failures ? "FAILED" : "every mutant caught, canary clean");
  return failures ? static_cast<int>(errc::failure) : 0;
}
#endif

}  // namespace

int cmd_crashtest(args& a) {
  reexec_without_aslr();
  crash::config c;
  bool self = a.flag("self-test");
  c.index = a.str("index", c.index);
  c.params = a.str("params", "");
  c.ops = a.u64("ops", c.ops);
  c.images = a.u64("images", c.images);
  c.threads = static_cast<uint32_t>(a.u64("threads", c.threads));
  c.seed = a.u64("seed", c.seed);
  c.exhaustive = a.flag("exhaustive");
  c.keys = a.u64("keys", c.keys);
  c.pool_size = a.u64("pool-size", c.pool_size);
  c.keyset = a.str("keyset", c.keyset);
  c.child_timeout = static_cast<uint32_t>(a.u64("child-timeout", c.child_timeout));
  c.max_violations = a.u64("max-violations", 0);
  c.details = static_cast<uint32_t>(a.u64("details", c.details));
  c.save_dir = a.str("save-dir", c.save_dir);
  c.verbose = a.flag("verbose");
  c.quiet = a.flag("quiet");
  const bool print_stats = a.flag("stats");
  c.replay = a.has("point");
  c.replay_point = a.u64("point", 0);
  c.replay_variant = a.u64("variant", 0);
  a.finish();
  if (c.threads == 0 || c.threads > 16) throw error(errc::usage, "--threads must be 1..16");
  if (self) {
#ifdef PMINDEX_MUTANTS
    return self_test(c);
#else
    throw error(errc::unsupported,
                "--self-test needs a test build (cmake -DPMINDEX_TEST_BUILD=ON): the canary mutants are not "
                "compiled into this pmindex");
#endif
  }
  auto r = run_and_report(c, true, print_stats);
  return r.violations ? static_cast<int>(errc::failure) : 0;
}

}  // namespace pmindex::cli

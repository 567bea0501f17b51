// `pmindex`: the command line of the toolkit. Usage: pmindex VERB [--option value ...]
#include <cstdio>
#include <cstring>
#include <exception>
#include <new>
#include <string>
#include <vector>

#include "commands.hpp"
#include "null_index.hpp"
#include "pmindex/error.hpp"

namespace pmindex::cli {

const verb k_verbs[] = {
    {"list", cmd_list, "the registered indexes and modes"},
    {"info", cmd_info, "a pool's header: --pool P"},
    {"load", cmd_load, "insert N deterministic keys: --index I --pool P --keys N [--seed S] [--ack-every K]"},
    {"verify", cmd_verify, "check a pool holds the first N keys: --pool P --keys N [--seed S]"},
    {"crashtest", cmd_crashtest, "crash checker: --index I [--ops N] [--images M] [--threads T] [--seed S] [--exhaustive] | --self-test [--index I]"},
    {"bench", cmd_bench, "benchmark indexes (all by default): [--index a,b] [--workload ycsb-a,...] [-n N] [-t T] [--dataset D] [--value-size B] (docs/bench.md)"},
    {"damagetest", cmd_damagetest, "damaged pools never crash or hang the tools: --index I|all [--cases N] [--seed S] [--case C] [--writes]"},
    {"stress", cmd_stress, "concurrent stress test with oracles: --index I [--threads T] [--seconds S] [--keys K] [--check a,b]"},
    {"substrate-bench", cmd_substrate_bench, "allocator, reopen/recovery and flush+fence costs: [--json FILE] [--blocks N]"},
    {"serve", cmd_serve, "memcached text-protocol server over an index: --index I --pool P [--listen 127.0.0.1:11211] [--threads T] [-I 1m] (docs/server.md)"},
    {"keys", cmd_keys, "what a dataset's keys look like: --dataset D [-n N] [--seed S] [--json] (docs/bench.md)"},
    {"compare", cmd_compare, "compare two `bench --json` files figure by figure: A.json B.json"},
    {"study", cmd_study, "a paper's evaluation from studies/NAME.toml: list | run NAME [--scale smoke|default|paper] [--out DIR] [--only PART] (docs/studies.md)"},
    {"report", cmd_report, "figures (PNG, SVG) and an HTML page from `bench --json` files: RESULTS.json... [--out DIR] (docs/python.md)"},
};
const size_t k_nverbs = sizeof k_verbs / sizeof k_verbs[0];

static void usage(FILE* f) {
  std::fprintf(f, "usage: pmindex VERB [--option value ...]\n\nverbs:\n");
  for (size_t i = 0; i < k_nverbs; ++i) std::fprintf(f, "  %-10s %s\n", k_verbs[i].name, k_verbs[i].summary);
  std::fprintf(f,
               "\ncommon options: --index NAME --pool PATH (default /dev/shm/pmindex.pool) --pool-size N[K|M|G]\n"
               "  --mode dram|volatile|persist|eadr|tx (default: an existing pool's own, persist for a new one)\n"
               "  --flush auto|clwb|clflushopt|clflush --pm-write-ns N\n"
               "every option can also be set as PMINDEX_<NAME> in the environment\n");
}

}  // namespace pmindex::cli

int main(int argc, char** argv) {
  using namespace pmindex;
  // The `null` index is the harness's own; the command line registers it so
  // `pmindex list` and `--index null` see it (the library does not).
  bench::register_null_index();
  if (argc < 2 || !std::strcmp(argv[1], "help") || !std::strcmp(argv[1], "--help") || !std::strcmp(argv[1], "-h")) {
    cli::usage(argc < 2 ? stderr : stdout);
    return argc < 2 ? static_cast<int>(errc::usage) : 0;
  }
  std::string verb = argv[1];
  std::vector<std::string> tokens(argv + 2, argv + argc);
  if (verb == "bench" || verb == "keys") {  // PiBench-style short options
    for (auto& t : tokens)
      if (t == "-n") t = "--records";
      else if (t == "-p") t = "--ops";
      else if (t == "-t") t = "--threads";
  }
  if (verb == "serve") {  // memcached's -I SIZE (or -ISIZE): the largest item
    for (size_t i = 0; i < tokens.size(); ++i)
      if (tokens[i] == "-I") tokens[i] = "--max-item-size";
      else if (tokens[i].rfind("-I", 0) == 0) tokens[i] = "--max-item-size=" + tokens[i].substr(2);
  }
  if (verb == "compare" && tokens.size() == 2 && tokens[0].rfind("--", 0) != 0 && tokens[1].rfind("--", 0) != 0)
    tokens = {"--a", tokens[0], "--b", tokens[1]};  // pmindex compare A.json B.json
  if (verb == "report") {  // pmindex report A.json B.json --out DIR: the files are positional
    std::vector<std::string> t;
    for (size_t i = 0; i < tokens.size(); ++i) {
      if (tokens[i].rfind("--", 0) == 0) {
        t.push_back(tokens[i]);
        if (tokens[i].find('=') == std::string::npos && i + 1 < tokens.size()) t.push_back(tokens[++i]);
      } else {
        t.insert(t.end(), {"--results", tokens[i]});
      }
    }
    tokens = t;
  }
  if (verb == "study" && !tokens.empty() && tokens[0].rfind("--", 0) != 0) {  // pmindex study run NAME ...
    std::vector<std::string> t = {"--sub", tokens[0]};
    size_t i = 1;
    if (i < tokens.size() && tokens[i].rfind("--", 0) != 0) t.insert(t.end(), {"--name", tokens[i++]});
    t.insert(t.end(), tokens.begin() + static_cast<std::ptrdiff_t>(i), tokens.end());
    tokens = t;
  }
  try {
    for (size_t i = 0; i < cli::k_nverbs; ++i)
      if (verb == cli::k_verbs[i].name) {
        cli::args a(verb, tokens);
        return cli::k_verbs[i].run(a);
      }
    throw error(errc::usage, "unknown verb '" + verb + "' (see `pmindex help`)");
  } catch (const error& e) {
    if (e.code() == errc::ok) return 0;  // --describe-options, VERB --help
    std::fprintf(stderr, "pmindex: %s\n", e.what());
    return e.exit_code();
  } catch (const std::bad_alloc&) {
    std::fprintf(stderr,
                 "pmindex: out of memory: a DRAM allocation failed (the operation that met it had no effect or all "
                 "of it; the pool stays consistent)\n");
    return static_cast<int>(errc::out_of_memory);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "pmindex: internal error: %s\n", e.what());
    return static_cast<int>(errc::failure);
  }
}

// `pmindex`: the command line of the toolkit. Usage: pmindex VERB [--option value ...]
#include <cstdio>
#include <cstring>
#include <exception>
#include <string>
#include <vector>

#include "commands.hpp"
#include "pmindex/error.hpp"

namespace pmindex::cli {

const verb k_verbs[] = {
    {"list", cmd_list, "the registered indexes and modes"},
    {"info", cmd_info, "a pool's header: --pool P"},
    {"load", cmd_load, "insert N deterministic keys: --index I --pool P --keys N [--seed S] [--ack-every K]"},
    {"verify", cmd_verify, "check a pool holds the first N keys: --pool P --keys N [--seed S]"},
};
const size_t k_nverbs = sizeof k_verbs / sizeof k_verbs[0];

static void usage(FILE* f) {
  std::fprintf(f, "usage: pmindex VERB [--option value ...]\n\nverbs:\n");
  for (size_t i = 0; i < k_nverbs; ++i) std::fprintf(f, "  %-10s %s\n", k_verbs[i].name, k_verbs[i].summary);
  std::fprintf(f,
               "\ncommon options: --index NAME --pool PATH (default /dev/shm/pmindex.pool) --pool-size N[K|M|G]\n"
               "  --mode dram|volatile|persist|eadr --flush auto|clwb|clflushopt|clflush --pm-write-ns N\n"
               "every option can also be set as PMINDEX_<NAME> in the environment\n");
}

}  // namespace pmindex::cli

int main(int argc, char** argv) {
  using namespace pmindex;
  if (argc < 2 || !std::strcmp(argv[1], "help") || !std::strcmp(argv[1], "--help") || !std::strcmp(argv[1], "-h")) {
    cli::usage(argc < 2 ? stderr : stdout);
    return argc < 2 ? static_cast<int>(errc::usage) : 0;
  }
  std::string verb = argv[1];
  std::vector<std::string> tokens(argv + 2, argv + argc);
  try {
    for (size_t i = 0; i < cli::k_nverbs; ++i)
      if (verb == cli::k_verbs[i].name) {
        cli::args a(verb, tokens);
        return cli::k_verbs[i].run(a);
      }
    throw error(errc::usage, "unknown verb '" + verb + "' (see `pmindex help`)");
  } catch (const error& e) {
    std::fprintf(stderr, "pmindex: %s\n", e.what());
    return e.exit_code();
  } catch (const std::exception& e) {
    std::fprintf(stderr, "pmindex: internal error: %s\n", e.what());
    return static_cast<int>(errc::failure);
  }
}

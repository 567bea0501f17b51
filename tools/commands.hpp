// The verbs of the `pmindex` command line; one file per verb (or family).
// Each returns the process exit code and throws pmindex::error for failures
// a user can cause.
#pragma once

#include "cli.hpp"

namespace pmindex::cli {

int cmd_list(args& a);
int cmd_info(args& a);
int cmd_load(args& a);
int cmd_verify(args& a);
int cmd_crashtest(args& a);
int cmd_bench(args& a);
int cmd_compare(args& a);
int cmd_keys(args& a);
int cmd_stress(args& a);
int cmd_substrate_bench(args& a);
int cmd_report(args& a);
int cmd_damagetest(args& a);
int cmd_serve(args& a);
int cmd_study(args& a);

struct verb {
  const char* name;
  int (*run)(args&);
  const char* summary;
};
// All verbs, in `pmindex help` order (defined in pmindex.cpp).
extern const verb k_verbs[];
extern const size_t k_nverbs;

}  // namespace pmindex::cli

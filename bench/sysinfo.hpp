// The context block of a result file: where and how it was measured.
#pragma once

#include <string>

#include "json.hpp"

namespace pmindex::bench {

std::string cpu_model();
std::string host_name();
// The source commit: `git rev-parse` in the source tree at run time (with
// "-dirty" if it has changes), else the commit seen when CMake configured,
// else "unknown". Read once, at the first call.
std::string git_commit();
// host, cpu, cores, build type, compiler, flags, git commit, date.
json::value context();

}  // namespace pmindex::bench

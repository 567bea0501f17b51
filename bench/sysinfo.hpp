// The context block of a result file: where and how it was measured.
#pragma once

#include <string>

#include "json.hpp"

namespace pmindex::bench {

std::string cpu_model();
std::string host_name();
// The source commit: `git rev-parse` in the source tree at run time (with
// "-dirty" if it has changes), else the commit seen when CMake configured,
// else "unknown". Read once, at the first call; a process started by a
// study (tools/study_run.cpp) takes the study's from k_commit_env instead.
std::string git_commit();
inline constexpr const char* k_commit_env = "PMINDEX_STUDY_COMMIT";
// host, cpu, cores, build type, compiler, flags, git commit, date.
json::value context();

}  // namespace pmindex::bench

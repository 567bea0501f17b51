// Helpers shared by the substrate unit tests (pool, modes, heap, epoch,
// canary): unique pool paths in /dev/shm, running the `pmindex` binary, the
// PMINDEX_LONG switch and a printed random seed.
#pragma once

#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "pmindex/error.hpp"
#include "test_seed.hpp"

namespace pmindex::test {

// A pool path unique to this process and test; removed by the destructor.
class temp_pool {
 public:
  explicit temp_pool(const std::string& tag) {
    path_ = "/dev/shm/c-" + tag + "-" + std::to_string(::getpid()) + ".pool";
    ::unlink(path_.c_str());
  }
  ~temp_pool() { ::unlink(path_.c_str()); }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

// Runs the pmindex binary with `args`; returns its exit code (or 128+signal)
// and its stdout (fd 2: its stderr) in *out; the other stream is dropped.
inline int run_pmindex(const std::vector<std::string>& args, std::string* out = nullptr, int fd = 1) {
  int pipefd[2];
  if (pipe(pipefd) != 0) return -1;
  pid_t pid = fork();
  if (pid == 0) {
    dup2(pipefd[1], fd);
    int devnull = ::open("/dev/null", O_WRONLY);
    if (devnull >= 0) dup2(devnull, 3 - fd);
    close(pipefd[0]);
    std::vector<char*> argv;
    std::string bin = PMINDEX_BINARY;
    argv.push_back(bin.data());
    std::vector<std::string> copy = args;
    for (auto& a : copy) argv.push_back(a.data());
    argv.push_back(nullptr);
    execv(bin.c_str(), argv.data());
    _exit(127);
  }
  close(pipefd[1]);
  std::string s;
  char buf[4096];
  for (ssize_t n; (n = read(pipefd[0], buf, sizeof buf)) > 0;) s.append(buf, static_cast<size_t>(n));
  close(pipefd[0]);
  int status = 0;
  waitpid(pid, &status, 0);
  if (out) *out = s;
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  return 128 + WTERMSIG(status);
}


// For a death test (EXPECT_EXIT(..., ExitedWithCode(0), "")): runs op in
// the child under a deadline of `seconds` (a hang dies of SIGALRM) and exits
// 0 if it threw errc::corrupt, 2 on another pmindex::error, 1 if it
// returned.
template <class Op>
[[noreturn]] void exit_0_if_corrupt(Op&& op, unsigned seconds = 20) {
  alarm(seconds);
  try {
    op();
  } catch (const error& e) {
    _exit(e.code() == errc::corrupt ? 0 : 2);
  }
  _exit(1);
}

// Runs op(i) on n threads at once (i = 0..n-1); throws errc::corrupt if
// each of them threw it. For exit_0_if_corrupt: writers that all wait on
// one damaged lock word must each give up, not keep each other waiting.
template <class Op>
void each_thread_corrupt(unsigned n, Op&& op) {
  std::atomic<unsigned> got{0};
  std::vector<std::thread> ts;
  for (unsigned i = 0; i < n; ++i)
    ts.emplace_back([&, i] {
      try {
        op(i);
      } catch (const error& e) {
        if (e.code() == errc::corrupt) ++got;
      }
    });
  for (auto& t : ts) t.join();
  if (got != n) throw error(errc::failure, std::to_string(got.load()) + " of " + std::to_string(n) + " threads got corrupt");
  throw error(errc::corrupt, "every thread");
}

}  // namespace pmindex::test

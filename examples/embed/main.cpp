// Embedding pmindex: create an index in a pool file, insert, scan, close;
// then a child process inserts more and dies without closing (as a crash
// would leave the pool), and the parent reopens the pool, which recovers,
// and finds every record the child inserted.
//
//   pmindex_embed DIR [INDEX]   (the pool is DIR/embed.pool; INDEX: fptree)
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <string>
#include <vector>

#include <pmindex/error.hpp>
#include <pmindex/index.hpp>

namespace {

pmindex::options pool_options(const std::string& dir, const std::string& index_name) {
  pmindex::options o;
  o.index = index_name;
  o.pool_path = dir + "/embed.pool";
  o.pool_size = uint64_t{64} << 20;
  o.quiet = true;
  return o;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2 || argc > 3) {
    std::fprintf(stderr, "usage: %s DIR [INDEX]\n", argv[0]);
    return 2;
  }
  const std::string dir = argv[1], index_name = argc > 2 ? argv[2] : "fptree";
  std::printf("indexes in the library: %zu\n", pmindex::registered_indexes().size());
  try {
    auto o = pool_options(dir, index_name);
    ::unlink(o.pool_path.c_str());

    // 1. Create, insert, scan, close.
    o.open = pmindex::pm::open_mode::must_create;
    {
      auto idx = pmindex::open(o);
      for (uint64_t k = 1; k <= 100; ++k) idx->insert(k, k * 10);
      pmindex::record out[5];
      size_t n = idx->scan(40, 5, out);
      std::printf("scan from 40:");
      for (size_t i = 0; i < n; ++i)
        std::printf(" %llu=%llu", (unsigned long long)out[i].key, (unsigned long long)out[i].value);
      std::printf("\n");
      idx->close();
    }

    // 2. A child reopens the pool, inserts 100 more records and exits
    // without closing it: the pool is left as after a crash.
    o.open = pmindex::pm::open_mode::must_exist;
    std::fflush(stdout);  // (the child must not print the parent's buffered lines)
    pid_t child = ::fork();
    if (child == 0) {
      try {
        auto idx = pmindex::open(o);
        for (uint64_t k = 1001; k <= 1100; ++k) idx->insert(k, k * 10);
        ::_exit(0);  // with the index open: no close(), no destructors
      } catch (const pmindex::error& e) {
        std::fprintf(stderr, "child: %s\n", e.what());
        ::_exit(1);
      }
    }
    int status = 0;
    if (child < 0 || ::waitpid(child, &status, 0) != child || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
      std::fprintf(stderr, "the child failed\n");
      return 1;
    }

    // 3. Reopen: the pool was not closed, so it is recovered.
    auto idx = pmindex::open(o);
    std::vector<pmindex::record> found;
    idx->range(1001, 1100, found);
    auto check = idx->check();
    std::printf("reopened after a crash: recovered=%s, records %llu, keys 1001..1100 found %zu, check %s\n",
                idx->report().was_clean ? "no" : "yes", (unsigned long long)idx->stats().records, found.size(),
                check.ok ? "ok" : check.message.c_str());
    idx->close();
    ::unlink(o.pool_path.c_str());
    return found.size() == 100 && check.ok ? 0 : 1;
  } catch (const pmindex::error& e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    return e.exit_code();
  }
}

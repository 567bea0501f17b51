// libpmindex_pibench.so: a PiBench wrapper (tree_api, see tree_api.hpp) over
// any pmindex index, so the original PiBench can drive pmindex indexes and
// results compare both ways. Configured by environment variables, because
// PiBench passes only tree_options_t:
//   PMINDEX_INDEX       index name (default canary; see `pmindex list`)
//   PMINDEX_MODE        dram | volatile | persist (default) | eadr
//   PMINDEX_POOL        pool file (default: PiBench's pool_path, else
//                       /dev/shm/pmindex-pibench.pool)
//   PMINDEX_POOL_SIZE   bytes, K/M/G suffix (default: PiBench's pool_size,
//                       else 1G)
//   PMINDEX_PARAMS      index parameters ("key=value,...")
//   PMINDEX_REOPEN=1    open an existing pool (recovering it) instead of
//                       starting fresh
//   PMINDEX_KEEP_POOL=1 leave the pool file when the tree is destroyed
// Starting fresh removes an existing file at the pool path only when it is a
// pmindex pool. Keys: 8 bytes, big-endian (PiBench's layout); values: 8
// bytes. Errors are printed to stderr and create_tree returns null.
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "pibench/tree_api.hpp"
#include "pmindex/error.hpp"
#include "pmindex/index.hpp"
#include "pmindex/pm/detail/header.hpp"

namespace {

using namespace pmindex;

uint64_t key_of(const char* k, size_t n) {
  uint64_t be = 0;
  std::memcpy(&be, k, n < 8 ? n : 8);
  return __builtin_bswap64(be) >> (n < 8 ? (8 - n) * 8 : 0);
}
void key_to(uint64_t key, char* out) {
  uint64_t be = __builtin_bswap64(key);
  std::memcpy(out, &be, 8);
}

std::string env(const char* name, const std::string& def) {
  const char* v = std::getenv(name);
  return v && *v ? v : def;
}

uint64_t size_arg(const std::string& s) {
  char* end = nullptr;
  uint64_t v = std::strtoull(s.c_str(), &end, 10);
  std::string suf(end ? end : "");
  if (suf == "K" || suf == "k") v <<= 10;
  else if (suf == "M") v <<= 20;
  else if (suf == "G") v <<= 30;
  else if (!suf.empty()) throw error(errc::usage, "PMINDEX_POOL_SIZE: bad size '" + s + "'");
  return v;
}

bool is_pmindex_pool(const std::string& path) {
  int fd = ::open(path.c_str(), O_RDONLY);
  if (fd < 0) return false;
  char m[8] = {};
  bool ok = ::pread(fd, m, 8, 0) == 8 && std::memcmp(m, pm::detail::k_magic, 8) == 0;
  ::close(fd);
  return ok;
}

class pmindex_tree final : public tree_api {
 public:
  pmindex_tree(std::unique_ptr<pmindex::index> idx, bool serialize, std::string remove_path)
      : idx_(std::move(idx)), serialize_(serialize), remove_path_(std::move(remove_path)) {}
  ~pmindex_tree() override {
    idx_.reset();  // clean close
    if (!remove_path_.empty()) ::unlink(remove_path_.c_str());
  }

  bool find(const char* key, size_t key_sz, char* value_out) override {
    auto l = lock();
    auto v = idx_->lookup(key_of(key, key_sz));
    if (!v) return false;
    std::memcpy(value_out, &*v, 8);
    return true;
  }
  bool insert(const char* key, size_t key_sz, const char* value, size_t value_sz) override {
    auto l = lock();
    return idx_->insert(key_of(key, key_sz), value_word(value, value_sz));
  }
  bool update(const char* key, size_t key_sz, const char* value, size_t value_sz) override {
    auto l = lock();
    return idx_->update(key_of(key, key_sz), value_word(value, value_sz));
  }
  bool remove(const char* key, size_t key_sz) override {
    auto l = lock();
    return idx_->remove(key_of(key, key_sz));
  }
  int scan(const char* key, size_t key_sz, int scan_sz, char*& values_out) override {
    // Results live in a per-thread buffer until this thread's next scan.
    static thread_local std::vector<record> recs;
    static thread_local std::vector<char> out;
    if (scan_sz <= 0) {
      values_out = nullptr;
      return 0;
    }
    recs.resize(static_cast<size_t>(scan_sz));
    size_t n;
    {
      auto l = lock();
      n = idx_->scan(key_of(key, key_sz), recs.size(), recs.data());
    }
    out.resize(n * 16);
    for (size_t i = 0; i < n; ++i) {
      key_to(recs[i].key, &out[i * 16]);
      std::memcpy(&out[i * 16 + 8], &recs[i].value, 8);
    }
    values_out = out.data();
    return static_cast<int>(n);
  }

 private:
  static uint64_t value_word(const char* v, size_t n) {
    uint64_t w = 0;
    std::memcpy(&w, v, n < 8 ? n : 8);
    return w;
  }
  std::unique_lock<std::mutex> lock() {
    return serialize_ ? std::unique_lock<std::mutex>(mu_) : std::unique_lock<std::mutex>();
  }
  std::unique_ptr<pmindex::index> idx_;
  bool serialize_;  // the index is not thread-safe and PiBench runs threads
  std::mutex mu_;
  std::string remove_path_;
};

}  // namespace

extern "C" __attribute__((visibility("default"))) tree_api* create_tree(const tree_options_t& opt) {
  try {
    if (opt.key_size != 8 || opt.value_size != 8)
      throw error(errc::unsupported, "pmindex indexes take 8-byte keys and 8-byte values (got key_size " +
                                         std::to_string(opt.key_size) + ", value_size " +
                                         std::to_string(opt.value_size) + ")");
    options o;
    o.index = env("PMINDEX_INDEX", "canary");
    auto e = find_index(o.index);
    if (!e) throw error(errc::usage, "unknown PMINDEX_INDEX '" + o.index + "'");
    std::string m = env("PMINDEX_MODE", "");
    if (m.empty()) {  // persist, or dram for volatile-only indexes (baselines)
      bool has_persist = false;
      for (auto x : e->modes) has_persist |= x == pm::mode::persist;
      m = has_persist ? "persist" : "dram";
    }
    auto mode = pm::parse_mode(m);
    if (!mode) throw error(errc::usage, "unknown PMINDEX_MODE '" + m + "'");
    o.mode = *mode;
    o.pool_path = env("PMINDEX_POOL", opt.pool_path.empty() ? "/dev/shm/pmindex-pibench.pool" : opt.pool_path);
    o.pool_size = size_arg(env("PMINDEX_POOL_SIZE", opt.pool_size ? std::to_string(opt.pool_size) : "1G"));
    o.params = env("PMINDEX_PARAMS", "");
    o.quiet = true;
    const bool reopen = env("PMINDEX_REOPEN", "0") == "1";
    const bool keep = env("PMINDEX_KEEP_POOL", "0") == "1";
    const bool file = o.mode != pm::mode::dram;
    if (file && !reopen) {
      struct stat st;
      if (::stat(o.pool_path.c_str(), &st) == 0) {
        if (!is_pmindex_pool(o.pool_path))
          throw error(errc::io, o.pool_path + " exists and is not a pmindex pool; not touching it");
        ::unlink(o.pool_path.c_str());
      }
      o.open = pm::open_mode::must_create;
    } else {
      o.open = pm::open_mode::create_if_missing;
    }
    auto idx = open(o);
    bool serialize = !e->concurrent && opt.num_threads > 1;
    return new pmindex_tree(std::move(idx), serialize, file && !keep ? o.pool_path : std::string());
  } catch (const std::exception& ex) {
    std::fprintf(stderr, "libpmindex_pibench: %s\n", ex.what());
    return nullptr;
  }
}

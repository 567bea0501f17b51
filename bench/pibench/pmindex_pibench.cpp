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
// pmindex pool. Keys and values: key_size 8 and value_size 8 (PiBench's
// default) use the u64 calls (keys big-endian, PiBench's layout: the fast
// path); any other sizes create the index with keys=bytes (unless
// PMINDEX_PARAMS says keys=) and use the byte calls with the key_sz and
// value_sz of each call. find() writes the value (value_size bytes, zero
// padded if the stored one is shorter); scan() lays out each record as its
// key then its value, each padded with zeros to key_size and value_size (so
// a record is key_size + value_size bytes, as PiBench expects). Errors are
// printed to stderr and create_tree returns null.
//
// Two builds of this file: libpmindex_pibench.so in PiBench master's tree_api
// layout (the default), and libpmindex_pibench_bulk.so (PMINDEX_PIBENCH_BULK)
// in the `bulk-loading` branch's layout, whose bulk_load inserts each record.
// Both export pmindex_pibench_counters(): this thread's flush/fence/alloc
// counters, which `pmindex bench --plugin` adds to its own per-op figures.
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <algorithm>
#include <cstring>
#include <fcntl.h>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "pibench/tree_api.hpp"
#include "pibench/tree_api_bulk.hpp"
#include "pmindex/error.hpp"
#include "pmindex/index.hpp"
#include "pmindex/pm/counters.hpp"
#include "pmindex/pm/detail/header.hpp"

#ifdef PMINDEX_PIBENCH_BULK
using tree_base = tree_api_bulk;
#else
using tree_base = tree_api;
#endif

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

#ifdef PMINDEX_PIBENCH_BULK
// bulk_load of the bulk-loading layout: each <key><value> record inserted.
template <class Tree>
bool insert_all(Tree& t, const char* data, size_t n, size_t key_sz, size_t value_sz) {
  for (size_t i = 0; i < n; ++i) {
    const char* r = data + i * (key_sz + value_sz);
    if (!t.insert(r, key_sz, r + key_sz, value_sz)) return false;
  }
  return true;
}
#endif

class pmindex_tree final : public tree_base {
 public:
  pmindex_tree(std::unique_ptr<pmindex::index> idx, bool serialize, std::string remove_path)
      : idx_(std::move(idx)), serialize_(serialize), remove_path_(std::move(remove_path)) {}

  ~pmindex_tree() override {
    idx_.reset();  // clean close
    if (!remove_path_.empty()) ::unlink(remove_path_.c_str());
  }
#ifdef PMINDEX_PIBENCH_BULK
  bool bulk_load(const char* data, size_t n, size_t key_sz, size_t value_sz) override {
    return insert_all(*this, data, n, key_sz, value_sz);
  }
#endif

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

// Keys and values of other sizes: the byte calls.
class pmindex_bytes_tree final : public tree_base {
 public:
  pmindex_bytes_tree(std::unique_ptr<pmindex::index> idx, bool serialize, std::string remove_path, size_t key_size,
                     size_t value_size)
      : idx_(std::move(idx)),
        serialize_(serialize),
        remove_path_(std::move(remove_path)),
        key_size_(key_size),
        value_size_(value_size) {}
  ~pmindex_bytes_tree() override {
    idx_.reset();
    if (!remove_path_.empty()) ::unlink(remove_path_.c_str());
  }
#ifdef PMINDEX_PIBENCH_BULK
  bool bulk_load(const char* data, size_t n, size_t key_sz, size_t value_sz) override {
    return insert_all(*this, data, n, key_sz, value_sz);
  }
#endif
  bool find(const char* key, size_t key_sz, char* value_out) override {
    static thread_local std::string v;
    bool found;
    {
      auto l = lock();
      found = idx_->lookup(std::string_view(key, key_sz), &v);
    }
    if (!found) return false;
    size_t n = std::min(v.size(), value_size_);
    std::memcpy(value_out, v.data(), n);
    std::memset(value_out + n, 0, value_size_ - n);
    return true;
  }
  bool insert(const char* key, size_t key_sz, const char* value, size_t value_sz) override {
    auto l = lock();
    return idx_->insert(std::string_view(key, key_sz), std::string_view(value, value_sz));
  }
  bool update(const char* key, size_t key_sz, const char* value, size_t value_sz) override {
    auto l = lock();
    return idx_->update(std::string_view(key, key_sz), std::string_view(value, value_sz));
  }
  bool remove(const char* key, size_t key_sz) override {
    auto l = lock();
    return idx_->remove(std::string_view(key, key_sz));
  }
  int scan(const char* key, size_t key_sz, int scan_sz, char*& values_out) override {
    static thread_local record_buffer recs;
    static thread_local std::vector<char> out;
    values_out = nullptr;
    if (scan_sz <= 0) return 0;
    recs.clear();
    {
      auto l = lock();
      idx_->scan(std::string_view(key, key_sz), static_cast<size_t>(scan_sz), recs);
    }
    const size_t stride = key_size_ + value_size_;
    out.assign(recs.size() * stride, 0);
    for (size_t i = 0; i < recs.size(); ++i) {
      auto k = recs.key(i), v = recs.value(i);
      std::memcpy(&out[i * stride], k.data(), std::min(k.size(), key_size_));
      std::memcpy(&out[i * stride + key_size_], v.data(), std::min(v.size(), value_size_));
    }
    values_out = out.data();
    return static_cast<int>(recs.size());
  }

 private:
  std::unique_lock<std::mutex> lock() {
    return serialize_ ? std::unique_lock<std::mutex>(mu_) : std::unique_lock<std::mutex>();
  }
  std::unique_ptr<pmindex::index> idx_;
  bool serialize_;
  std::mutex mu_;
  std::string remove_path_;
  size_t key_size_, value_size_;
};

}  // namespace

// This thread's persistence counters (pmindex::pm::counters: five uint64_t,
// flushed lines, fences, allocs, frees, bytes allocated).
extern "C" __attribute__((visibility("default"))) const pmindex::pm::counters* pmindex_pibench_counters() {
  return &pmindex::pm::t_counters;
}

extern "C" __attribute__((visibility("default"))) tree_base* create_tree(const tree_options_t& opt) {
  try {
    const bool bytes = opt.key_size != 8 || opt.value_size != 8;
    if (opt.key_size == 0) throw error(errc::usage, "key_size 0");
    options o;
    o.index = env("PMINDEX_INDEX", "canary");
    auto e = find_index(o.index);
    if (!e) throw error(errc::usage, "unknown PMINDEX_INDEX '" + o.index + "'");
    // No PMINDEX_MODE: a reopened pool's own mode (stored in it), else
    // persist, or dram for volatile-only indexes (baselines).
    std::string m = env("PMINDEX_MODE", "");
    if (!m.empty()) {
      auto mode = pm::parse_mode(m);
      if (!mode) throw error(errc::usage, "unknown PMINDEX_MODE '" + m + "'");
      o.mode = *mode;
    } else if (!e->supports(pm::mode::persist)) {
      o.mode = pm::mode::dram;
    }
    o.pool_path = env("PMINDEX_POOL", opt.pool_path.empty() ? "/dev/shm/pmindex-pibench.pool" : opt.pool_path);
    o.pool_size = size_arg(env("PMINDEX_POOL_SIZE", opt.pool_size ? std::to_string(opt.pool_size) : "1G"));
    o.params = env("PMINDEX_PARAMS", "");
    if (bytes) {
      if (!e->supports(key_kind::bytes))
        throw error(errc::unsupported, o.index + " takes only 8-byte keys and values (got key_size " +
                                           std::to_string(opt.key_size) + ", value_size " +
                                           std::to_string(opt.value_size) + ")");
      if (opt.key_size > e->max_key || opt.value_size > e->max_value)
        throw error(errc::unsupported, o.index + " takes keys up to " + std::to_string(e->max_key) +
                                           " bytes and values up to " + std::to_string(e->max_value));
      if (o.params.find("keys=") == std::string::npos) o.params += o.params.empty() ? "keys=bytes" : ",keys=bytes";
    }
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
    std::string remove = file && !keep ? o.pool_path : std::string();
    if (bytes) return new pmindex_bytes_tree(std::move(idx), serialize, remove, opt.key_size, opt.value_size);
    return new pmindex_tree(std::move(idx), serialize, remove);
  } catch (const std::exception& ex) {
    std::fprintf(stderr, "libpmindex_pibench: %s\n", ex.what());
    return nullptr;
  }
}

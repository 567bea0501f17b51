// The runtime Index interface: what the harness, the tools, the crash checker
// and users see. One virtual call per operation; templates live inside each
// index. Keys are unsigned 64-bit integers compared numerically; values are
// 8 bytes.
//
// Threads: any number of threads may call operations concurrently on an
// index whose info().concurrent is true; each thread's per-pool state (epoch
// slot, allocator cache, counters) is created on its first call and reused.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "pmindex/pm/pool.hpp"

namespace pmindex {

struct record {
  uint64_t key;
  uint64_t value;
  friend bool operator==(const record&, const record&) = default;
};

struct options {
  std::string index = "canary";
  std::string pool_path = "/dev/shm/pmindex.pool";
  uint64_t pool_size = uint64_t{1} << 30;
  pm::mode mode = pm::mode::persist;
  pm::flush_kind flush = pm::flush_kind::automatic;
  uint32_t pm_write_ns = 0;
  pm::open_mode open = pm::open_mode::create_if_missing;
  std::string params;  // index-specific "key=value,..." (used at creation)
  // Crash-checker hooks (see pm::pool_options).
  pm::persist_observer* observer = nullptr;
  char* image = nullptr;
  uint64_t image_size = 0;
  bool quiet = false;
};

struct check_result {
  bool ok = true;
  std::string message;  // the first violated invariant
  static check_result fail(std::string m) { return {false, std::move(m)}; }
};

struct index_stats {
  uint64_t records = 0;
  uint64_t pm_bytes_used = 0;      // bytes in the index's pool blocks
  uint64_t pm_bytes_reserved = 0;  // chunks taken from the pool
  uint64_t dram_bytes = 0;         // DRAM the index (and its allocator) holds
  std::vector<std::pair<std::string, double>> extra;  // index-specific
};

// How the open went: what the pool was, and what recovery cost.
struct open_report {
  bool created = false;
  bool was_clean = false;     // reopened after a clean close
  double open_seconds = 0;    // mapping + allocator state read back
  double recover_seconds = 0; // index repair + tracing (dirty opens only)
  uint64_t traced_blocks = 0;
};

class index {
 public:
  virtual ~index() = default;

  virtual bool insert(uint64_t key, uint64_t value) = 0;  // false if present
  virtual bool update(uint64_t key, uint64_t value) = 0;  // false if absent
  virtual bool upsert(uint64_t key, uint64_t value) {      // true if inserted
    if (insert(key, value)) return true;
    update(key, value);
    return false;
  }
  virtual bool remove(uint64_t key) = 0;  // false if absent
  virtual std::optional<uint64_t> lookup(uint64_t key) = 0;
  // Up to `count` records with key >= from, in key order, into out[0..).
  virtual size_t scan(uint64_t from, size_t count, record* out) = 0;
  // Every record with lo <= key <= hi, in key order, appended to out.
  virtual size_t range(uint64_t lo, uint64_t hi, std::vector<record>& out);

  virtual check_result check() = 0;
  // Every persistent block the index owns, for tracing recovery and leak
  // checks: sink.add(offset, size) with the size it was allocated with.
  virtual void trace(pm::pool::trace_sink& sink) = 0;
  virtual index_stats stats() = 0;

  const std::string& name() const noexcept { return name_; }
  pm::pool& pool() noexcept { return *pool_; }
  const open_report& report() const noexcept { return report_; }
  // Clean shutdown (also done by the destructor of the owning handle).
  void close();
  // Drop without a clean shutdown (tests: what a crash leaves).
  void abandon();

 protected:
  explicit index(pm::pool& p) : pool_(&p) {}

 private:
  friend std::unique_ptr<index> open(const options&);
  std::string name_;
  pm::pool* pool_;
  std::unique_ptr<pm::pool> owned_pool_;
  open_report report_;
};

// How an index is constructed on a pool. The factory must: on a created pool,
// build an empty index and set the pool root; on a clean pool, attach; on a
// dirty pool, repair the structure (without allocating) so that trace() sees
// exactly the reachable blocks. open() then rebuilds the allocator by tracing.
enum class open_kind { created, clean, dirty };

struct index_entry {
  std::string name;
  std::string description;
  bool concurrent = true;                 // safe for concurrent callers
  std::vector<pm::mode> modes;            // supported modes
  std::function<std::unique_ptr<index>(pm::pool&, open_kind)> factory;
  std::string default_params;
};

// The registry of indexes (built-in ones register themselves).
const std::vector<index_entry>& registered_indexes();
const index_entry* find_index(const std::string& name);
void register_index(index_entry e);

// Opens (creating or recovering) an index; throws pmindex::error.
std::unique_ptr<index> open(const options& o);

}  // namespace pmindex

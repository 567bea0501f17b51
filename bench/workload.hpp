// Workloads: what the run phase does. A workload is an operation mix
// (exact fractions), an access distribution over the record ids, and scan
// lengths; presets name the YCSB and pmemids_bench mixes.
//
// Exactness: the operation types are not drawn at random; after every batch
// each type's count is within one operation of its exact share of the ops
// generated so far (1% inserts gives 1% inserts, not 0 and not 1.3%). The
// order inside a batch is shuffled by the thread's generator.
//
// Ids: the prefill holds ids [0, n). Reads, updates, removes and scan starts
// draw an id from the distribution over [0, key_space) (key_space defaults
// to n: every read hits unless removed). Run-phase inserts take fresh ids:
// thread t of T inserts n + t, n + t + T, n + t + 2T, ... so no insert
// collides with the prefill or with another thread, whatever T. "latest"
// (YCSB D) draws a Zipfian recency rank over the thread's view (prefill,
// then its own inserts, newest first).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "distributions.hpp"
#include "keys.hpp"
#include "rng.hpp"

namespace pmindex::bench {

enum class op_type : uint8_t { read, insert, update, remove, scan, rmw };
inline constexpr unsigned k_nops = 6;
std::string_view to_string(op_type t) noexcept;

enum class distribution : uint8_t { uniform, selfsimilar, zipfian, latest };
std::string_view to_string(distribution d) noexcept;
std::optional<distribution> parse_distribution(std::string_view s) noexcept;

struct workload {
  std::string name = "custom";
  double mix[k_nops] = {1, 0, 0, 0, 0, 0};  // fractions by op_type, sum 1
  distribution dist = distribution::uniform;
  double skew = 0.2;      // self-similar h (0.2 = 80/20)
  double theta = 0.99;    // Zipfian theta
  uint32_t scan_size = 100;
  bool scan_uniform = false;  // scan length uniform in [1, scan_size] (YCSB E)
  bool scan_size_given = false;  // the mix said "scan=F:L": --scan-size leaves it alone
};

// Presets: ycsb-a .. ycsb-f, read100, update90insert10, pmemids-read,
// pmemids-write (see docs/bench.md).
std::optional<workload> preset(std::string_view name);
std::vector<std::string> preset_names();
// A preset name, or a mix written as "read=0.9+insert=0.1" (uniform; a
// scan share may carry its length, "scan=1:160"); throws error(usage).
workload parse_workload(const std::string& spec);
// "read=0.5,update=0.5"-style summary of the mix.
std::string mix_string(const workload& w);

// One pre-generated operation (16 bytes).
struct op {
  uint64_t key;
  uint32_t len;      // scan length
  op_type type;
  uint8_t sampled;   // time this one (latency sample)
  uint16_t pad;
};

// Per-thread, per-run operation generator. All state lives here (no sharing).
class op_generator {
 public:
  struct params {
    workload w;
    key_map keys;
    uint64_t prefill = 0;      // n
    uint64_t key_space = 0;    // ids reads draw from: [0, key_space)
    uint32_t thread = 0, nthreads = 1;
    uint64_t seed = 1;
    uint32_t sample_every = 64;  // 1 in sample_every ops is timed (0: none)
    bool random_inserts = false; // inserts draw ids like removes (not fresh)
    uint64_t first_insert = 0;   // first fresh id (0: prefill); later phases start past earlier inserts
    bool emit_ids = false;       // op::key is the record id, not its u64 key (the byte path)
    uint64_t id_limit = UINT64_MAX;  // ids a fresh insert may take (a dataset's size)
  };
  explicit op_generator(const params& p);

  // Fills out[0..count) with the next operations; returns how many, fewer
  // than count only when fresh inserts ran out of ids (id_limit): the ops
  // from the one that would have exceeded it on are not generated.
  size_t fill(op* out, size_t count);
  bool exhausted() const noexcept { return exhausted_; }
  // Fresh inserts generated so far by this thread.
  uint64_t inserts_generated() const noexcept { return own_inserts_; }
  // The id of this thread's j-th insert.
  uint64_t insert_id(uint64_t j) const noexcept {
    return (p_.first_insert ? p_.first_insert : p_.prefill) + j * p_.nthreads + p_.thread;
  }

 private:
  uint64_t draw_id();
  params p_;
  rng r_;
  rng sample_r_;
  zipfian zipf_;
  zipfian latest_zipf_;
  selfsimilar ss_;
  double share_[k_nops];    // normalised mix
  double quota_[k_nops];    // ops owed to each type so far
  uint64_t generated_ = 0;  // ops generated so far
  uint64_t own_inserts_ = 0;
  uint64_t scramble_;
  bool exhausted_ = false;
};

}  // namespace pmindex::bench

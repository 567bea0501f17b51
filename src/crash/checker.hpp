// Internals of the crash checker: the history (operation log), the crash
// points, and the oracle run in each forked child. See crashtest.hpp for the
// model and docs/crash-checker.md for what is checked and why.
#pragma once

#include <atomic>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "crash/crashtest.hpp"
#include "pmindex/index.hpp"
#include "rng.hpp"
#include "shadow.hpp"

namespace pmindex::crash {

enum class op_kind : uint8_t { insert, update, remove, lookup, scan };
const char* to_string(op_kind k);
std::string hex(uint64_t v);

// The state of one key: present with a value, or absent.
struct key_state {
  bool present = false;
  uint64_t value = 0;
  friend bool operator==(const key_state&, const key_state&) = default;
};

// One operation of the history. Every field is written before `start`, the
// result before `end` (stamps of one global clock; 0 = not yet), so a child
// that sees the log at any instant knows which operations completed.
// Values are named by their id (unique per operation): with u64 values the
// id is the value; with byte values the bytes are values_.make(id, size).
struct op_rec {
  op_kind kind = op_kind::lookup;
  uint32_t thread = 0;
  uint32_t ki = 0;        // key index in the key space
  uint64_t value = 0;     // the id of the value it writes
  key_state prev;         // private keys: the state before the operation
  uint64_t start = 0, end = 0;
  bool ok = false;        // insert/update/remove succeeded; lookup found
  uint64_t got = 0;       // lookup: read_tag() of the value read
};

// Value id standing for bytes no operation of the key wrote (ids never are 0).
inline constexpr uint64_t k_foreign = 0;

// What read_all() and the oracle compare: key bytes -> value bytes (u64
// keys as their 8 big-endian bytes, u64 values as their 8 bytes).
using content_map = std::map<std::string, std::string>;

// The state after applying `o` to `s` (single-key operations only).
key_state apply(const op_rec& o, key_state s);

// Thread-private keys have one writer, so their state is known exactly;
// shared keys are checked against the possible linearizations.
inline constexpr uint32_t k_shared = UINT32_MAX;

// Keys inserted after recovery (never in the key space).
inline constexpr size_t k_probes = 24;

class checker final : public shadow_observer::listener {
 public:
  explicit checker(const config& c);
  ~checker() override;
  result run();

 private:
  enum class phase : uint8_t { creating, running, done };

  // --- keys and values (keys.cpp)
  void choose_key_kind(const index_entry& e);  // crashtest.cpp
  void make_keys();
  void draw_dataset_keys(bench::rng& rng);
  void draw_limited_keys(bench::rng& rng);
  std::string show_key(uint32_t ki) const;
  std::string show_key(std::string_view k) const;
  std::string show(const key_state& s) const;
  std::string value_of(uint64_t id) const;                 // the bytes operation `id` writes
  bool value_is(uint64_t id, std::string_view v) const;    // v is exactly that value
  uint64_t read_tag(std::string_view v) const;             // what a lookup records of a value
  // The index calls on key bytes, u64 or byte path as the run is.
  bool call_insert(index& idx, std::string_view k, uint64_t id, std::string& buf);
  bool call_update(index& idx, std::string_view k, uint64_t id, std::string& buf);
  bool call_remove(index& idx, std::string_view k);
  bool call_lookup(index& idx, std::string_view k, std::string* v);
  size_t call_scan(index& idx, std::string_view from, size_t count, record_buffer& out);

  // --- history (history.cpp)
  void run_history(bool calibrate);
  void run_thread(uint32_t t);
  void do_op(uint32_t t, uint64_t j, bench::rng& rng);
  void live_violation(const std::string& m);

  // --- crash points (crashtest.cpp)
  bool wants(uint64_t k) override;
  void crash(uint64_t k, bool frozen) override;
  size_t run_images(uint64_t k, const std::vector<uint64_t>& vs, size_t first, const std::vector<candidate>& c,
                    bool frozen, uint64_t parent_used);
  bool rechecking_ = false;  // run_images: checking an unfrozen image again after its child hung
  std::string save_image(uint64_t k, uint64_t v, const std::vector<candidate>& c);
  std::string where(uint64_t k) const;
  void report_violation(const std::string& what);

  // --- the child (oracle.cpp): "" if the image passes, else the violation
  std::string oracle(char* image, bool frozen, uint64_t parent_used);
  std::string read_all(index& idx, content_map& out);
  std::string read_by_lookups(index& idx, content_map& out);
  key_state recovered(uint32_t ki, const std::string* v, std::initializer_list<key_state> prefer) const;
  std::string check_keys(const content_map& content);
  std::string check_shared(uint32_t ki, const std::string* got);
  std::string check_usable(index& idx, content_map content);

  config c_;
  result r_;
  bool bytes_ = false;                      // byte calls (else the u64 calls)
  bool ordered_ = true;                     // scans (else lookups: index_entry::ordered)
  // A single-threaded index (index_entry::concurrent false) run by several
  // threads: each operation, stamps included, holds serial_mu_ (as `pmindex
  // stress` runs such an index), so the history is sequential.
  bool serial_ = false;
  std::mutex serial_mu_;
  uint64_t limit_ = 0;                      // keys below it (index_entry::key_limit; 0: any)
  std::vector<std::string> keys_;           // the key space, as bytes
  std::vector<uint64_t> keys_u64_;          // the same as integers (u64 calls)
  std::map<std::string, uint32_t> key_index_;
  std::vector<std::string> probes_;         // keys inserted after recovery (never in the key space)
  std::vector<uint32_t> owner_;            // per key: thread, or k_shared
  std::vector<key_state> ref_;             // private keys: after completed ops
  std::vector<std::vector<op_rec>> logs_;  // per thread, preallocated
  std::atomic<uint64_t> clock_{1};
  std::unique_ptr<shadow_observer> obs_;
  std::unique_ptr<index> idx_;
  phase phase_ = phase::creating;

  // schedule
  bool calibrating_ = false;
  std::map<uint64_t, uint64_t> points_;  // random mode: point -> images
  uint64_t end_images_ = 0;
  bench::rng vrng_;
  std::atomic<bool> stop_{false};

  // children
  char* msg_ = nullptr;  // shared page the child writes its verdict to
  static constexpr size_t k_msg = 4096;
  uint64_t saved_ = 0;
};

}  // namespace pmindex::crash

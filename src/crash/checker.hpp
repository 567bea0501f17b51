// Internals of the crash checker: the history (operation log), the crash
// points, and the oracle run in each forked child. See crashtest.hpp for the
// model and DESIGN.md for the requirements.
#pragma once

#include <atomic>
#include <cstdint>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "pmindex/crash/crashtest.hpp"
#include "pmindex/index.hpp"
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
struct op_rec {
  op_kind kind = op_kind::lookup;
  uint32_t thread = 0;
  uint32_t ki = 0;        // key index in the key space
  uint64_t key = 0, value = 0;
  key_state prev;         // private keys: the state before the operation
  uint64_t start = 0, end = 0;
  bool ok = false;        // insert/update/remove succeeded; lookup found
  uint64_t got = 0;       // lookup: the value read
};

// The state after applying `o` to `s` (single-key operations only).
key_state apply(const op_rec& o, key_state s);

// Thread-private keys have one writer, so their state is known exactly;
// shared keys are checked against the possible linearizations.
inline constexpr uint32_t k_shared = UINT32_MAX;

class checker final : public shadow_observer::listener {
 public:
  explicit checker(const config& c);
  ~checker() override;
  result run();

 private:
  enum class phase : uint8_t { creating, running, done };

  // --- history (history.cpp)
  void make_keys();
  void run_history(bool calibrate);
  void run_thread(uint32_t t);
  void do_op(uint32_t t, uint64_t j, std::mt19937_64& rng);
  void live_violation(const std::string& m);

  // --- crash points (crashtest.cpp)
  bool wants(uint64_t k) override;
  void crash(uint64_t k, bool frozen) override;
  void run_image(uint64_t k, uint64_t v, const std::vector<candidate>& c, bool frozen, uint64_t parent_used);
  std::string save_image(uint64_t k, uint64_t v, const std::vector<candidate>& c);
  std::string where(uint64_t k) const;
  void report_violation(const std::string& what);

  // --- the child (oracle.cpp): "" if the image passes, else the violation
  std::string oracle(char* image, bool frozen, uint64_t parent_used);
  std::string check_keys(const std::map<uint64_t, uint64_t>& content);
  std::string check_shared(uint32_t ki, const key_state& got);
  std::string check_usable(index& idx, std::map<uint64_t, uint64_t> content);

  config c_;
  result r_;
  std::vector<uint64_t> keys_;
  std::map<uint64_t, uint32_t> key_index_;
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
  std::mt19937_64 vrng_;
  std::atomic<bool> stop_{false};

  // children
  char* msg_ = nullptr;  // shared page the child writes its verdict to
  static constexpr size_t k_msg = 4096;
  uint64_t saved_ = 0;
};

}  // namespace pmindex::crash

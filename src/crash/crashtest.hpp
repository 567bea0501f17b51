// The crash checker (docs/crash-checker.md: the crash model, what is checked).
//
// It runs a random history of operations on any registered index, in a pool
// whose flushes and fences are observed (pm::persist_observer), and keeps a
// shadow of what a power failure would leave: a cache line flushed and then
// fenced is durable with its value at that flush; any other line written
// since holds some prefix of its stores. At chosen persistence events it
// forks; the child builds one crash image (per line: the durable value, the
// value at its last unfenced flush, or the current value, never a mix of
// words inside a line), moves the pool to another address, recovers it
// through pmindex::open and checks the oracle:
//   - open succeeds (recovery, tracing rebuild), check() holds;
//   - every completed operation is present, the one in flight is wholly
//     applied or absent (single thread: the content equals the reference
//     map before or after that operation; threads: see history.cpp and
//     docs/crash-checker.md, "Histories");
//   - no block is reachable twice, the heap holds exactly the traced blocks,
//     and no more blocks than the live pool had handed out (a block freed
//     while a crash could still reach it is a use-after-free);
//   - a second recovery of what the first left gives the same index;
//   - the recovered index takes more inserts and removes and stays correct.
// A hung child (alarm) or one killed by a signal is a violation too.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "pmindex/pm/mode.hpp"

namespace pmindex {
struct index_entry;
}

namespace pmindex::crash {

// Dataset mode (`crashtest --dataset NAME`): where the keys come from. The
// checker draws `config::keys` distinct ids at random and, with byte keys,
// makes one key in eight a proper prefix of another (the empty key
// included), so prefix chains are always crashed too.
struct key_source {
  std::string name;      // as given, for messages and the reproduce command
  bool integer = false;  // 8-byte integer keys, used through the u64 calls
  uint64_t size = 0;     // ids 0..size-1
  std::function<std::string(uint64_t id)> key;
};

// Byte values: the value of operation `id` (unique per operation) is
// make(id, value_size); matches(id, v) says whether v is that value.
struct value_source {
  std::function<void(uint64_t id, size_t size, std::string& out)> make;
  std::function<bool(uint64_t id, std::string_view v)> matches;
};

struct config {
  std::string index = "canary";
  std::string params;             // index params ("" = the index's defaults)
  uint64_t ops = 400;             // operations in the history (all threads)
  uint64_t images = 2000;         // crash images to check (random mode)
  uint32_t threads = 1;           // 1..16 threads run the history
  uint64_t seed = 1;
  bool exhaustive = false;        // every event of the history is a crash point
  uint64_t keys = 64;             // key space (small: splits, growth, empties)
  // Keys from a dataset (empty: the checker's own mixed dense/sparse u64
  // keys) and the value size. Byte keys (a non-integer dataset) or a value
  // size other than 8 run the byte calls on an index created keys=bytes.
  std::optional<key_source> dataset;
  uint64_t value_size = 8;
  value_source values;            // required for byte values
  uint64_t pool_size = 8 << 20;
  // persist, or tx (the index's undo-logged protocol; pm/tx.hpp).
  pm::mode mode = pm::mode::persist;
  std::string keyset = "mixed";   // threads: disjoint | shared | mixed
  uint32_t child_timeout = 20;    // seconds before a child counts as hung
  uint64_t max_violations = 0;    // stop after this many (0: never stop)
  uint32_t details = 5;           // violations printed (and images saved) in full
  std::string save_dir = "/tmp";  // where failing images go ("": not saved)
  bool print_violations = true;   // on stderr, as they are found
  bool verbose = false;           // children keep their stderr
  bool quiet = false;             // no progress lines on stderr
  // Replay one image: crash point and variant (as printed by a violation).
  bool replay = false;
  uint64_t replay_point = 0;
  uint64_t replay_variant = 0;
  // The command that reproduces a run (printed with each violation).
  std::string command;
};

struct result {
  uint64_t images = 0;
  uint64_t violations = 0;
  uint64_t events = 0;        // persistence events in the history
  uint64_t crash_points = 0;  // distinct events crashed at
  uint64_t unfrozen = 0;      // threads: images taken while another thread
                              // might run (the block-count check is skipped)
  uint64_t rechecked = 0;     // ... whose child hung and that were checked again
  double seconds = 0;
  std::vector<std::string> messages;  // the first `details` violations
  // The index's stats().extra at the end of the history (node kinds etc.),
  // so a test can show which structural changes its history went through.
  std::vector<std::pair<std::string, double>> final_stats;
};

// Runs the checker; throws pmindex::error for a bad configuration (unknown
// index, index without persist mode, pool too small).
result run(const config& c);

// The rule of every byte run (crashtest, load, verify, stress): the index
// must take keys=bytes (else error(unsupported)) and values of
// `value_size` bytes (else error(value_too_long)); returns `params` with
// keys=bytes added unless given (keys=u64 is error(usage)) and, for an index
// whose value slot is a `value` parameter smaller by default than
// value_size, value=value_size unless given. `why` names the options that
// asked for bytes, for the messages.
std::string byte_run_params(const index_entry& e, const std::string& params, uint64_t value_size,
                            const std::string& why);

}  // namespace pmindex::crash

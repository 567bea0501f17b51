// The Python Index object: one open pmindex index behind the mapping
// protocol, with int or bytes keys and values.
//
// Key kinds. An index created keys=u64 takes int keys (0 .. 2^64-1) and int
// values through the u64 calls (the fast path); 8-byte bytes work too and
// results are ints. An index created keys=bytes takes bytes keys and values
// (an int key is its 8 big-endian bytes, an int value its 8 host-order
// bytes, as in index.hpp) and returns bytes.
//
// Threads and the GIL. Every call holds the index in a shared_mutex: shared
// for an index whose registry entry says `concurrent`, exclusive otherwise,
// so close() waits for calls in flight and a non-concurrent index is never
// entered by two threads. Point calls keep the GIL (they take well under a
// microsecond); long calls (open, close, scans, ranges, stats, check, and
// writes of more than k_long_bytes, and the batch calls) release it. A thread never waits for the
// lock while holding the GIL (it tries, and on failure releases the GIL before
// it blocks), so a lock holder waiting for the GIL always gets it: the two
// cannot deadlock.
#pragma once

#include <nanobind/nanobind.h>

#include <atomic>
#include <cstdint>
#include <memory>
#include <shared_mutex>
#include <string>
#include <vector>

#include "pmindex/index.hpp"

namespace pmindex::py {

namespace nb = nanobind;

// Writes with more key + value bytes than this release the GIL.
inline constexpr size_t k_long_bytes = 64 * 1024;
// scan(start, count) reads up to this many records in one call of the
// index (so the index's scan guarantee holds for them); longer scans and
// the unbounded iterators go on in batches.
inline constexpr size_t k_scan_call_max = 65536;

class py_index {
 public:
  py_index(std::unique_ptr<index> idx, std::shared_ptr<const index_entry> entry, std::string path,
           std::string mode);
  ~py_index();
  py_index(const py_index&) = delete;
  py_index& operator=(const py_index&) = delete;

  enum class write_op : uint8_t { insert, update, upsert };
  bool write(write_op op, nb::handle key, nb::handle value);
  bool remove(nb::handle key);
  // The value, or an empty object when the key is absent.
  nb::object lookup(nb::handle key);

  // Batches (batch.cpp): arguments are converted first (a bad one raises
  // before anything is read or written), then one call of the binding runs
  // them all with the GIL released.
  // The value of each key, or `def` when absent.
  nb::list get_many(nb::handle keys, nb::handle def);
  // Upserts every (key, value) of a mapping or an iterable of pairs, in
  // order (a later duplicate wins, as in dict.update); the number of keys
  // that were new. A failing write (PoolFull) leaves the ones before it.
  size_t put_many(nb::handle items);

  // The rest of the mapping protocol (mapping.cpp).
  nb::object pop(nb::handle key, nb::handle def);  // def: empty object = KeyError when absent
  nb::object setdefault(nb::handle key, nb::handle def);
  nb::tuple popitem();  // the first (smallest) key
  void clear();

  nb::dict stats();
  bool check();
  nb::dict report();
  uint64_t size();
  void close() { shut_down(true); }
  void abandon() { shut_down(false); }

  bool closed() const noexcept { return closed_.load(std::memory_order_acquire); }
  bool bytes_keys() const noexcept { return bytes_; }
  const index_entry& entry() const noexcept { return *entry_; }
  const std::string& path() const noexcept { return path_; }
  const std::string& mode() const noexcept { return mode_; }
  std::string repr() const;
  std::string name_prefix() const;

  // Builds the Python object of a key or value read back.
  nb::object key_object(uint64_t k) const;
  nb::object key_object(std::string_view k) const;
  nb::object value_object(uint64_t v) const;
  nb::object value_object(std::string_view v) const;

 private:
  void shut_down(bool clean);  // idempotent
  void forget_file();
  friend class call_guard;
  friend class py_iter;
  std::unique_ptr<index> idx_;
  std::shared_ptr<const index_entry> entry_;
  std::shared_mutex mu_;
  std::atomic<bool> closed_{false};  // idx_ is gone (read without the lock)
  bool concurrent_;
  bool bytes_;
  std::string path_, mode_;
  open_report report_;
  // The pool file's identity (st_dev, st_ino) while this open holds it.
  bool has_file_ = false;
  uint64_t dev_ = 0, ino_ = 0;
};

// True if a pool at `path` (the same file by any name) is open in this
// process. The pool's lock refuses a second open without telling another
// process's from ours, so the binding keeps the list and says which.
bool pool_open_here(const std::string& path);

// Holds an index for one call (see above). Entered with the GIL held;
// raises IndexClosed after close().
class call_guard {
 public:
  call_guard(py_index& p, bool exclusive);
  ~call_guard();
  call_guard(const call_guard&) = delete;
  call_guard& operator=(const call_guard&) = delete;
  index& operator*() const noexcept { return *p_.idx_; }
  index* operator->() const noexcept { return p_.idx_.get(); }

 private:
  py_index& p_;
  bool exclusive_;
};

// The iterator of scan(), range(), items(), keys(), values() and iter(db):
// records are read in batches (GIL released) and handed out one by one.
class py_iter {
 public:
  enum class what : uint8_t { items, keys, values };
  // An unbounded or counted scan from `start` (None: the first key).
  static py_iter* scan(nb::object owner, nb::handle start, size_t count, what w);
  // Every record with lo <= key <= hi, read by one range() call.
  static py_iter* range(nb::object owner, nb::handle lo, nb::handle hi);
  nb::object next();
  // Every record still to come, as a list of what next() returns.
  nb::list rest();
  // Every record still to come, keys and values apart (keys=u64 only).
  void rest_u64(std::vector<uint64_t>& keys, std::vector<uint64_t>& values);

 private:
  nb::object item(size_t i) const;
  py_iter(nb::object owner, what w);
  bool fetch();       // the next batch; false when the scan is over
  nb::object owner_;  // the Index (kept alive while iterating)
  py_index* ix_;
  what what_;
  bool u64_;  // records in u_ (keys=u64 index), else in b_
  std::vector<record> u_;
  record_buffer b_;
  size_t pos_ = 0, len_ = 0;
  // The next batch: from next_u_ / next_s_; `remaining_` records left.
  bool more_ = false;
  uint64_t next_u_ = 0;
  std::string next_s_;
  size_t remaining_ = 0;
  size_t batch_ = 256;
};

}  // namespace pmindex::py

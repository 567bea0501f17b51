// An index that calls another one under a mutex, one call at a time: how
// `pmindex stress` gives a single-threaded index (index_entry::concurrent
// false) to the threads of a --check that calls the index itself. A whole
// range() or scan() holds the lock, so it sees the index between two
// operations, as a sequential index promises.
#pragma once

#include <mutex>

#include "pmindex/index.hpp"

namespace pmindex::cli {

class serial_index final : public index {
  template <class F>
  auto call(F f) {
    std::lock_guard lk(mu_);
    return f();
  }

 public:
  serial_index(index& inner, std::mutex& mu) : index(inner.pool()), in_(inner), mu_(mu) {}

  bool insert(uint64_t k, uint64_t v) override { return call([&] { return in_.insert(k, v); }); }
  bool update(uint64_t k, uint64_t v) override { return call([&] { return in_.update(k, v); }); }
  bool upsert(uint64_t k, uint64_t v) override { return call([&] { return in_.upsert(k, v); }); }
  bool remove(uint64_t k) override { return call([&] { return in_.remove(k); }); }
  std::optional<uint64_t> lookup(uint64_t k) override { return call([&] { return in_.lookup(k); }); }
  size_t scan(uint64_t from, size_t count, record* out) override {
    return call([&] { return in_.scan(from, count, out); });
  }
  size_t range(uint64_t lo, uint64_t hi, std::vector<record>& out) override {
    return call([&] { return in_.range(lo, hi, out); });
  }
  bool insert(std::string_view k, std::string_view v) override { return call([&] { return in_.insert(k, v); }); }
  bool update(std::string_view k, std::string_view v) override { return call([&] { return in_.update(k, v); }); }
  bool upsert(std::string_view k, std::string_view v) override { return call([&] { return in_.upsert(k, v); }); }
  bool remove(std::string_view k) override { return call([&] { return in_.remove(k); }); }
  bool lookup(std::string_view k, std::string* v) override { return call([&] { return in_.lookup(k, v); }); }
  size_t scan(std::string_view from, size_t count, record_buffer& out) override {
    return call([&] { return in_.scan(from, count, out); });
  }
  size_t range(std::string_view lo, std::string_view hi, record_buffer& out) override {
    return call([&] { return in_.range(lo, hi, out); });
  }
  check_result check() override { return call([&] { return in_.check(); }); }
  void trace(pm::pool::trace_sink& sink) override { call([&] { in_.trace(sink); }); }
  index_stats stats() override { return call([&] { return in_.stats(); }); }
  // The inner index is closed by its owner, never through this view.
  void close() override {}
  void abandon() override {}

 private:
  index& in_;
  std::mutex& mu_;
};

}  // namespace pmindex::cli

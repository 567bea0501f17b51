// See snapshot_check.hpp.
#include "testing/snapshot_check.hpp"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "keys.hpp"

namespace pmindex::checks {

namespace {

using bench::value_of;

struct shared_state {
  std::vector<uint64_t> keys;    // universe, by index
  std::vector<uint32_t> sorted;  // indexes in key order
  std::vector<uint64_t> sorted_keys;
  std::unique_ptr<uint32_t[]> log;  // index << 1 | insert
  uint64_t cap = 0;
  std::atomic<uint64_t> started{0}, completed{0};
  std::atomic<bool> stop{false};
  const std::atomic<bool>* ext_stop = nullptr;
  std::mutex wmu;
  std::mutex rmu;  // result merging
  snapshot_check_result res;
};

void writer(index& idx, shared_state& st, uint64_t seed, std::vector<uint8_t>& present) {
  bench::rng rng(seed);
  while (!st.stop.load(std::memory_order_relaxed) && !(st.ext_stop && st.ext_stop->load())) {
    std::lock_guard lk(st.wmu);
    uint64_t j = st.started.load(std::memory_order_relaxed);
    if (j >= st.cap) break;
    uint32_t i = uint32_t(rng() % st.keys.size());
    bool ins = !present[i];
    st.log[j] = i << 1 | uint32_t(ins);
    st.started.store(j + 1, std::memory_order_release);  // log[j] visible first
    bool ok = ins ? idx.insert(st.keys[i], value_of(st.keys[i])) : idx.remove(st.keys[i]);
    present[i] = ins;
    st.completed.store(j + 1, std::memory_order_release);
    if (!ok) {
      std::lock_guard rk(st.rmu);
      if (!st.res.violations++) st.res.first = "write on key " + std::to_string(st.keys[i]) + " failed";
    }
  }
}

class reader_check {
 public:
  reader_check(shared_state& st) : st_(st), present_(st.keys.size(), 0) {}

  // Returns an empty string if `r` equals the range after some prefix k in
  // [s, e] of the log.
  std::string verify(uint64_t lo, uint64_t hi, uint64_t limit, std::vector<record>& r, uint64_t s,
                     uint64_t e) {
    // A scan limited to `limit` records: compare within [lo, last] when full.
    if (limit != UINT64_MAX && r.size() == limit && !r.empty()) hi = r.back().key;
    // Other threads' keys do not count.
    size_t kept = 0;
    for (auto& x : r)
      if (std::binary_search(st_.sorted_keys.begin(), st_.sorted_keys.end(), x.key)) r[kept++] = x;
      else if (x.key < lo || x.key > hi) return "key outside the range";
    r.resize(kept);
    for (size_t i = 0; i < r.size(); ++i) {
      if (r[i].key < lo || r[i].key > hi) return "key outside the range";
      if (i && r[i].key <= r[i - 1].key) return "keys not ascending";
      if (r[i].value != value_of(r[i].key)) return "wrong value for key " + std::to_string(r[i].key);
    }
    if (r.size() > limit) return "more records than asked";
    while (pos_ < s) apply(st_.log[pos_++]);
    auto in_r = [&](uint64_t k) {
      auto it = std::lower_bound(r.begin(), r.end(), k, [](const record& a, uint64_t b) { return a.key < b; });
      return it != r.end() && it->key == k;
    };
    // Mismatch = |R xor (S within [lo, hi])| at prefix s.
    int64_t mismatch = 0;
    size_t a = std::lower_bound(st_.sorted_keys.begin(), st_.sorted_keys.end(), lo) - st_.sorted_keys.begin();
    size_t in_s = 0, common = 0;
    for (size_t q = a; q < st_.sorted_keys.size() && st_.sorted_keys[q] <= hi; ++q)
      if (present_[st_.sorted[q]]) {
        ++in_s;
        if (in_r(st_.sorted_keys[q])) ++common;
      }
    mismatch = int64_t(in_s - common) + int64_t(r.size() - common);
    if (mismatch == 0) return {};
    for (uint64_t j = s; j < e; ++j) {
      uint32_t x = st_.log[j];
      uint64_t k = st_.keys[x >> 1];
      if (k < lo || k > hi) continue;
      bool ins = x & 1;
      mismatch += (ins == in_r(k)) ? -1 : 1;
      if (mismatch == 0) return {};
    }
    return "result of " + std::to_string(r.size()) + " records in [" + std::to_string(lo) + ", " +
           std::to_string(hi) + "] matches no state between ops " + std::to_string(s) + " and " +
           std::to_string(e);
  }

 private:
  void apply(uint32_t x) { present_[x >> 1] = x & 1; }
  shared_state& st_;
  std::vector<uint8_t> present_;
  uint64_t pos_ = 0;
};

void reader(index& idx, shared_state& st, uint64_t seed) {
  bench::rng rng(seed);
  reader_check rc(st);
  std::vector<record> out;
  std::vector<record> buf(512);
  uint64_t queries = 0, violations = 0;
  std::string first;
  while (!st.stop.load(std::memory_order_relaxed) && !(st.ext_stop && st.ext_stop->load())) {
    uint64_t lo = rng(), hi;
    switch (rng() % 4) {
      case 0: lo = 0, hi = UINT64_MAX; break;              // everything
      case 1: hi = lo > UINT64_MAX - (uint64_t{1} << 60) ? UINT64_MAX : lo + (uint64_t{1} << 60); break;
      case 2: hi = lo > UINT64_MAX - (uint64_t{1} << 56) ? UINT64_MAX : lo + (uint64_t{1} << 56); break;
      default: hi = UINT64_MAX; break;                      // scan below
    }
    bool is_scan = hi == UINT64_MAX && lo != 0;
    uint64_t limit = UINT64_MAX;
    uint64_t s = st.completed.load(std::memory_order_acquire);
    out.clear();
    if (is_scan) {
      limit = 1 + rng() % buf.size();
      size_t n = idx.scan(lo, limit, buf.data());
      out.assign(buf.begin(), buf.begin() + n);
    } else {
      idx.range(lo, hi, out);
    }
    uint64_t e = st.started.load(std::memory_order_acquire);
    std::string err = rc.verify(lo, hi, limit, out, s, e);
    ++queries;
    if (!err.empty() && !violations++) first = (is_scan ? "scan: " : "range: ") + err;
  }
  std::lock_guard lk(st.rmu);
  st.res.queries += queries;
  if (violations && st.res.first.empty()) st.res.first = first;
  st.res.violations += violations;
}

}  // namespace

uint64_t snapshot_value_of(uint64_t key) { return value_of(key); }

snapshot_check_result run_snapshot_check(index& idx, const snapshot_check_options& o) {
  shared_state st;
  st.keys.resize(o.universe);
  const bench::key_map scattered(bench::key_universe::sparse, bench::key_salt(o.seed));
  for (uint32_t i = 0; i < o.universe; ++i) st.keys[i] = o.key ? o.key(i) : scattered(i);
  st.ext_stop = o.stop;
  st.sorted.resize(o.universe);
  for (uint32_t i = 0; i < o.universe; ++i) st.sorted[i] = i;
  std::sort(st.sorted.begin(), st.sorted.end(), [&](uint32_t a, uint32_t b) { return st.keys[a] < st.keys[b]; });
  st.sorted_keys.resize(o.universe);
  for (uint32_t i = 0; i < o.universe; ++i) st.sorted_keys[i] = st.keys[st.sorted[i]];
  st.cap = o.max_ops;
  st.log.reset(new uint32_t[st.cap]);
  std::vector<uint8_t> present(o.universe, 0);  // writers' view, under wmu

  std::vector<std::thread> ts;
  for (unsigned w = 0; w < o.writers; ++w)
    ts.emplace_back([&, w] { writer(idx, st, o.seed * 7919 + w, present); });
  for (unsigned r = 0; r < o.readers; ++r) ts.emplace_back([&, r] { reader(idx, st, o.seed * 104729 + r); });
  if (o.stop) {
    while (!o.stop->load()) std::this_thread::sleep_for(std::chrono::milliseconds(5));
  } else {
    std::this_thread::sleep_for(std::chrono::duration<double>(o.seconds));
  }
  st.stop = true;
  for (auto& t : ts) t.join();
  st.res.ops = st.completed.load();
  if (o.final_state)
    for (uint32_t i = 0; i < o.universe; ++i)
      if (present[i]) (*o.final_state)[st.keys[i]] = value_of(st.keys[i]);
  return st.res;
}

}  // namespace pmindex::checks

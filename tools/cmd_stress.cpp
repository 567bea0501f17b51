// pmindex stress: a concurrent stress test over any registered index.
//
// T worker threads run random insert / update / remove / lookup / scan for
// --seconds. Worker t owns the keys congruent to t modulo M (M = T + number
// of checks with a thread), scrambled over the whole 64-bit space, so its
// std::map oracle of its own keys is exact: only it writes them. Reads go
// over every key. What is checked:
//   - own-key lookups and updates/removes/inserts return exactly what the
//     oracle says (linearizability of each thread's own operations);
//   - every (key, value) any read returns carries the tag of its key and a
//     sequence number its owner has already issued (no torn or foreign
//     values, nothing from freed memory);
//   - scans return keys >= from in strictly increasing order, and the
//     scanning thread's own keys inside the covered interval are exactly its
//     oracle's (they cannot change under it);
// and at the end: the index equals the union of the oracles (full range and
// point lookups), check() holds, then again after a clean close + reopen and
// (persist/eadr) after an abandon + recovery.
// Summary line: `stress <index>: <ops> ops, <violations> violations`.
#include <unistd.h>

#include <chrono>
#include <cinttypes>
#include <cstdio>
#include <memory>
#include <random>
#include <set>
#include <sstream>
#include <thread>

#include "commands.hpp"
#include "pmindex/error.hpp"
#include "pmindex/util/hash.hpp"
#include "stress.hpp"

namespace pmindex::cli {

std::vector<stress_check>& stress_checks() {
  static std::vector<stress_check> v;
  return v;
}

namespace {

using util::mix64;
// Values: high 24 bits tag the key, low 40 bits a per-owner sequence number.
constexpr int k_seq_bits = 40;
uint64_t key_tag(uint64_t key) { return mix64(key ^ 0x5bd1e995) >> k_seq_bits; }
uint64_t make_value(uint64_t key, uint64_t seq) { return key_tag(key) << k_seq_bits | seq; }

class stress_run {
 public:
  stress_run(uint32_t workers, uint32_t modulus, uint64_t keys_per_owner, uint64_t seed)
      : workers_(workers), modulus_(modulus), keys_(keys_per_owner), seed_(seed), seq_(modulus) {
    for (auto& s : seq_) s.store(0);
  }

  // The i-th key of owner o: residue o modulo M, scrambled; a few owners'
  // keys sit at the ends of the key space.
  uint64_t key(uint32_t owner, uint64_t i) const {
    if (i == 0) return owner;                                            // smallest
    if (i == 1) return (UINT64_MAX - owner) / modulus_ * modulus_ + owner;  // largest
    uint64_t limit = UINT64_MAX / modulus_;
    return mix64(i * 0x9E3779B97F4A7C15ull + seed_ + owner) % limit * modulus_ + owner;
  }
  uint32_t owner_of(uint64_t key) const { return static_cast<uint32_t>(key % modulus_); }

  void violation(const std::string& what) {
    uint64_t n = violations_.fetch_add(1) + 1;
    if (n <= 10) {
      std::lock_guard lk(print_mu_);
      std::fprintf(stderr, "stress: violation: %s\n", what.c_str());
    }
  }

  // A value read for `key` (by anyone): right tag, already issued.
  void check_value(uint64_t key, uint64_t v, const char* where) {
    if (owner_of(key) >= workers_) return;  // a --check's key: its values are its own business
    uint64_t issued = seq_[owner_of(key)].load(std::memory_order_acquire);
    if (v >> k_seq_bits != key_tag(key) || (v & ((uint64_t{1} << k_seq_bits) - 1)) > issued)
      violation(std::string(where) + ": key " + std::to_string(key) + " returned value " + std::to_string(v) +
                " that was never written for it");
  }
  uint64_t next_value(uint32_t owner, uint64_t key) {
    // Published before the write, so a reader never sees a future number.
    return make_value(key, seq_[owner].fetch_add(1, std::memory_order_acq_rel) + 1);
  }

  void worker(index& idx, uint32_t t, const std::atomic<bool>& stop, std::map<uint64_t, uint64_t>& oracle,
              std::mutex* serial) {
    std::mt19937_64 rng(seed_ * 1000003 + t);
    std::vector<record> buf(128);
    uint64_t ops = 0;
    auto locked = [&](auto f) {
      if (!serial) return f();
      std::lock_guard lk(*serial);
      return f();
    };
    try {
      while (!stop.load(std::memory_order_relaxed)) {
        for (int burst = 0; burst < 64; ++burst, ++ops) {
          uint32_t op = rng() % 100;
          uint64_t k = key(t, rng() % keys_);
          auto it = oracle.find(k);
          bool present = it != oracle.end();
          if (op < 30) {
            uint64_t v = next_value(t, k);
            bool r = locked([&] { return idx.insert(k, v); });
            if (r != !present) violation("insert(" + std::to_string(k) + ") returned " + std::to_string(r));
            if (r) oracle[k] = v;
          } else if (op < 45) {
            uint64_t v = next_value(t, k);
            bool r = locked([&] { return idx.update(k, v); });
            if (r != present) violation("update(" + std::to_string(k) + ") returned " + std::to_string(r));
            if (r) oracle[k] = v;
          } else if (op < 65) {
            bool r = locked([&] { return idx.remove(k); });
            if (r != present) violation("remove(" + std::to_string(k) + ") returned " + std::to_string(r));
            if (r) oracle.erase(k);
          } else if (op < 80) {
            auto v = locked([&] { return idx.lookup(k); });
            if (v.has_value() != present || (v && *v != it->second))
              violation("lookup(" + std::to_string(k) + ") of an own key disagrees with the oracle");
          } else if (op < 90) {
            uint64_t any = key(static_cast<uint32_t>(rng() % workers_), rng() % keys_);
            auto v = locked([&] { return idx.lookup(any); });
            if (v) check_value(any, *v, "lookup");
          } else {
            uint64_t from = rng() % 4 == 0 ? rng() : key(static_cast<uint32_t>(rng() % workers_), rng() % keys_);
            size_t want = 1 + rng() % buf.size();
            size_t n = locked([&] { return idx.scan(from, want, buf.data()); });
            check_scan(t, from, want, buf.data(), n, oracle);
          }
        }
      }
    } catch (const std::exception& e) {
      violation("thread " + std::to_string(t) + " stopped by an exception: " + e.what());
    }
    ops_.fetch_add(ops);
  }

  void check_scan(uint32_t t, uint64_t from, size_t want, const record* r, size_t n,
                  const std::map<uint64_t, uint64_t>& oracle) {
    if (n > want) return violation("scan returned more records than asked");
    for (size_t i = 0; i < n; ++i) {
      if (r[i].key < from) return violation("scan from " + std::to_string(from) + " returned a smaller key");
      if (i && r[i - 1].key >= r[i].key) return violation("scan returned keys out of order");
      check_value(r[i].key, r[i].value, "scan");
    }
    // Own keys in the covered interval [from, end] must match the oracle.
    bool to_end = n < want;
    uint64_t end = n ? r[n - 1].key : 0;
    if (!to_end && n == 0) return;
    auto it = oracle.lower_bound(from);
    size_t i = 0;
    for (; it != oracle.end() && (to_end || it->first <= end); ++it) {
      while (i < n && r[i].key < it->first) ++i;
      if (i == n || r[i].key != it->first || r[i].value != it->second)
        return violation("scan from " + std::to_string(from) + " misses or misreports own key " +
                         std::to_string(it->first));
    }
    for (i = 0; i < n; ++i)
      if (owner_of(r[i].key) == t && !oracle.count(r[i].key))
        return violation("scan returned own key " + std::to_string(r[i].key) + " that is not present");
  }

  // The whole index against `expected`: full range, point lookups, check().
  void compare(index& idx, const std::map<uint64_t, uint64_t>& expected, const std::string& when) {
    std::vector<record> all;
    idx.range(0, UINT64_MAX, all);
    if (all.size() != expected.size())
      violation(when + ": the index holds " + std::to_string(all.size()) + " records, the oracles " +
                std::to_string(expected.size()));
    auto it = expected.begin();
    for (size_t i = 0; i < all.size() && it != expected.end(); ++i, ++it)
      if (all[i].key != it->first || all[i].value != it->second) {
        violation(when + ": first difference at key " + std::to_string(it->first));
        break;
      }
    for (auto& [k, v] : expected)
      if (idx.lookup(k) != v) {
        violation(when + ": lookup(" + std::to_string(k) + ") differs from the oracle");
        break;
      }
    auto c = idx.check();
    if (!c.ok) violation(when + ": check() failed: " + c.message);
  }

  uint64_t ops() const { return ops_.load(); }
  uint64_t violations() const { return violations_.load(); }
  std::atomic<uint64_t>& ops_counter() { return ops_; }

 private:
  uint32_t workers_, modulus_;
  uint64_t keys_, seed_;
  std::vector<std::atomic<uint64_t>> seq_;
  std::atomic<uint64_t> ops_{0}, violations_{0};
  std::mutex print_mu_;
};

// --- built-in extra checks (also examples of the extension point)

uint64_t stats_final(index& idx, const std::map<uint64_t, uint64_t>& expected) {
  auto s = idx.stats();
  if (s.records == expected.size()) return 0;
  std::fprintf(stderr, "stress: violation: stats().records is %" PRIu64 ", expected %zu\n", s.records,
               expected.size());
  return 1;
}

uint64_t range_final(index& idx, const std::map<uint64_t, uint64_t>& expected) {
  std::mt19937_64 rng(expected.size());
  std::vector<uint64_t> keys;
  for (auto& kv : expected) keys.push_back(kv.first);
  uint64_t bad = 0;
  for (int i = 0; i < 200 && !keys.empty(); ++i) {
    uint64_t lo = rng() % 3 ? keys[rng() % keys.size()] : rng();
    uint64_t hi = rng() % 3 ? keys[rng() % keys.size()] : rng();
    if (lo > hi) std::swap(lo, hi);
    std::vector<record> got;
    idx.range(lo, hi, got);
    auto a = expected.lower_bound(lo), b = expected.upper_bound(hi);
    size_t j = 0;
    bool same = static_cast<size_t>(std::distance(a, b)) == got.size();
    for (auto it = a; same && it != b; ++it, ++j) same = got[j].key == it->first && got[j].value == it->second;
    if (!same) ++bad;
  }
  if (bad) std::fprintf(stderr, "stress: violation: %" PRIu64 " of 200 range() queries differ\n", bad);
  return bad;
}

const stress_check_registrar k_stats_check({"stats", "stats().records equals the number of records", nullptr,
                                             stats_final});
const stress_check_registrar k_range_check({"range", "200 random range(lo, hi) queries match the oracle", nullptr,
                                             range_final});

std::vector<const stress_check*> parse_checks(const std::string& list) {
  std::vector<const stress_check*> out;
  std::stringstream ss(list);
  for (std::string name; std::getline(ss, name, ',');) {
    if (name.empty()) continue;
    const stress_check* found = nullptr;
    for (auto& c : stress_checks())
      if (c.name == name) found = &c;
    if (!found) {
      std::string known;
      for (auto& c : stress_checks()) known += (known.empty() ? "" : ", ") + c.name;
      throw error(errc::usage, "unknown --check '" + name + "' (known: " + known + ")");
    }
    out.push_back(found);
  }
  return out;
}

}  // namespace

int cmd_stress(args& a) {
  bool pool_given = a.has("pool");
  options o = index_options(a, pm::open_mode::must_create);
  uint32_t threads = static_cast<uint32_t>(a.u64("threads", 2));
  double seconds = a.real("seconds", 5);
  uint64_t keys = a.u64("keys", 20000);  // per thread
  uint64_t seed = a.u64("seed", std::random_device{}());
  auto checks = parse_checks(a.str("check", ""));
  bool keep = a.flag("keep");
  if (!a.has("pool-size")) o.pool_size = uint64_t{256} << 20;
  a.finish();
  if (threads < 1 || threads > 256) throw error(errc::usage, "--threads must be 1..256");
  if (keys < 2) throw error(errc::usage, "--keys must be at least 2");
  if (!pool_given) o.pool_path = "/dev/shm/pmindex-stress-" + std::to_string(::getpid()) + ".pool";
  o.quiet = true;
  auto e = find_index(o.index);
  if (!e) throw error(errc::usage, "unknown index '" + o.index + "' (see `pmindex list`)");
  struct remover {
    std::string path;
    bool active;
    ~remover() {
      if (active) ::unlink(path.c_str());
    }
  } cleanup{o.pool_path, !keep && o.mode != pm::mode::dram};

  uint32_t check_threads = 0;
  for (auto* c : checks) check_threads += c->concurrent ? 1 : 0;
  stress_run run(threads, threads + check_threads, keys, seed);
  std::fprintf(stderr, "stress %s: %u threads, %.1f s, %" PRIu64 " keys per thread, mode %s, seed %" PRIu64 "\n",
               o.index.c_str(), threads, seconds, keys, std::string(pm::to_string(o.mode)).c_str(), seed);

  auto idx = open(o);
  std::mutex serial_mu;  // indexes that are not concurrent run under one lock
  std::mutex* serial = e->concurrent ? nullptr : &serial_mu;
  std::atomic<bool> stop{false};
  std::vector<std::map<uint64_t, uint64_t>> oracles(threads);
  std::vector<std::unique_ptr<stress_context>> contexts;
  std::atomic<uint64_t> check_violations{0};
  std::vector<std::thread> pool;
  for (uint32_t t = 0; t < threads; ++t)
    pool.emplace_back([&, t] { run.worker(*idx, t, stop, oracles[t], serial); });
  uint32_t owner = threads;
  for (auto* c : checks) {
    if (!c->concurrent) continue;
    uint32_t my = owner++;
    contexts.push_back(std::make_unique<stress_context>(stress_context{
        *idx, stop, seed + my, [&run, my](uint64_t i) { return run.key(my, i); }, {}, &run.ops_counter(),
        [&run, name = c->name](const std::string& m) { run.violation("--check " + name + ": " + m); }}));
    auto* ctx = contexts.back().get();
    pool.emplace_back([c, ctx, &check_violations] { check_violations += c->concurrent(*ctx); });
  }
  std::this_thread::sleep_for(std::chrono::duration<double>(seconds));
  stop = true;
  for (auto& th : pool) th.join();

  std::map<uint64_t, uint64_t> expected;
  for (auto& m : oracles) expected.insert(m.begin(), m.end());
  for (auto& c : contexts) expected.insert(c->oracle.begin(), c->oracle.end());
  auto finals = [&](index& x, const std::string& when) {
    run.compare(x, expected, when);
    for (auto* c : checks)
      if (c->final) check_violations += c->final(x, expected);
  };
  finals(*idx, "after the run");

  if (o.mode != pm::mode::dram) {
    idx->close();
    idx.reset();
    options r = o;
    r.open = pm::open_mode::must_exist;
    idx = open(r);
    if (!idx->report().was_clean) run.violation("the pool was not clean after close()");
    finals(*idx, "after a clean reopen");
    if (o.mode == pm::mode::persist || o.mode == pm::mode::eadr) {
      idx->abandon();
      idx.reset();
      idx = open(r);
      finals(*idx, "after recovery");
    }
    idx->close();
  }
  uint64_t violations = run.violations() + check_violations.load();
  std::printf("stress %s: %" PRIu64 " ops, %" PRIu64 " violations\n", o.index.c_str(), run.ops(), violations);
  std::fflush(stdout);
  return violations ? static_cast<int>(errc::failure) : 0;
}

}  // namespace pmindex::cli

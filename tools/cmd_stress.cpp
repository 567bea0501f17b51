// pmindex stress: a concurrent stress test over any registered index.
//
// T worker threads run random insert / update / remove / lookup / scan for
// --seconds. Each worker owns its keys (stress_keys.hpp), so its std::map
// oracle of its own keys is exact: only it writes them. Reads go over every
// key. What is checked:
//   - own-key lookups and updates/removes/inserts return exactly what the
//     oracle says (linearizability of each thread's own operations);
//   - every (key, value) any read returns carries the tag of its key and a
//     sequence number its owner has already issued (no torn or foreign
//     values, nothing from freed memory);
//   - scans (half of them from just past another worker's hot key, one of
//     a few per worker that half of all operations insert and remove)
//     return keys >= from in strictly increasing order, and the
//     scanning thread's own keys inside the covered interval are exactly its
//     oracle's (they cannot change under it);
// and at the end: the index equals the union of the oracles (full range and
// point lookups; an unordered index, index_entry::ordered = false, runs
// lookups in place of scans and is compared by lookups and its
// stats().records), check() holds, then again after a clean close + reopen and
// (persist/eadr) after an abandon + recovery.
//
// `--dataset D --value-size B` (dataset_args.hpp): keys from a dataset and
// values of B bytes; byte runs go through the byte calls on an index
// created keys=bytes (--value-size alone: keys of u64-bytes).
// Summary line: `stress <index>: <ops> ops, <violations> violations`.
#include <unistd.h>

#include <chrono>
#include <cinttypes>
#include <cstdio>
#include <memory>
#include <random>  // random_device: --seed's default
#include <sstream>
#include <thread>

#include "commands.hpp"
#include "dataset_args.hpp"
#include "null_index.hpp"
#include "pmindex/error.hpp"
#include "serial_index.hpp"
#include "stress.hpp"
#include "stress_keys.hpp"

namespace pmindex::cli {

std::vector<stress_check>& stress_checks() {
  static std::vector<stress_check> v;
  return v;
}

namespace {

using stress::k_seq_bits;

// K = uint64_t: u64 calls, values are their ids. K = std::string: byte
// calls, values value_codec::encode(id). R is what a read returns.
template <class K>
class stress_run {
  static constexpr bool k_u64 = std::is_same_v<K, uint64_t>;
  using R = K;  // a value read back: the id (u64) or the bytes

 public:
  using oracle_map = std::map<K, uint64_t>;  // key -> value id

  stress_run(uint32_t workers, uint32_t modulus, uint64_t keys_per_owner, uint64_t seed,
             stress::key_space<K> space, stress::value_codec codec, bool ordered)
      : workers_(workers), keys_(keys_per_owner), seed_(seed), space_(std::move(space)), codec_(codec),
        seq_(modulus), ordered_(ordered) {
    for (auto& s : seq_) s.store(0);
  }

  K key(uint32_t owner, uint64_t i) const { return space_.key(owner, i); }

  void violation(const std::string& what) {
    uint64_t n = violations_.fetch_add(1) + 1;
    if (n <= 10) {
      std::lock_guard lk(print_mu_);
      std::fprintf(stderr, "stress: violation: %s\n", what.c_str());
    }
  }

  static std::string show(const K& k) {
    if constexpr (k_u64) {
      return std::to_string(k);
    } else {
      std::string s = "key of " + std::to_string(k.size()) + " bytes \"";
      for (size_t i = 0; i < k.size() && i < 32; ++i)
        s += k[i] >= 0x20 && k[i] < 0x7f ? k[i] : '?';
      return s + (k.size() > 32 ? "...\"" : "\"");
    }
  }

  // The value bytes (or id) of value id `vid`.
  R value_of(uint64_t vid) const {
    if constexpr (k_u64) {
      return vid;
    } else {
      std::string v;
      codec_.encode(vid, v);
      return v;
    }
  }

  // A value read for `key` (by anyone): right tag, already issued.
  void check_value(const K& key, const R& v, const char* where) {
    uint32_t owner = space_.owner_of(key);
    if (owner == UINT32_MAX) return violation(std::string(where) + " returned " + show(key) + ", never written");
    if (owner >= workers_) return;  // a --check's key: its values are its own business
    uint64_t vid;
    if constexpr (k_u64) {
      vid = v;
    } else {
      if (!codec_.checkable()) {
        if (v.size() != codec_.size()) violation(std::string(where) + ": " + show(key) + " has a value of wrong size");
        return;
      }
      if (!codec_.decode(v, vid))
        return violation(std::string(where) + ": " + show(key) + " returned a torn or foreign value of " +
                         std::to_string(v.size()) + " bytes");
    }
    uint64_t issued = seq_[owner].load(std::memory_order_acquire);
    if (vid >> k_seq_bits != space_.tag(key) || (vid & ((uint64_t{1} << k_seq_bits) - 1)) > issued)
      violation(std::string(where) + ": " + show(key) + " returned value " + std::to_string(vid) +
                " that was never written for it");
  }
  uint64_t next_value(uint32_t owner, const K& key) {
    // Published before the write, so a reader never sees a future number.
    return space_.tag(key) << k_seq_bits | (seq_[owner].fetch_add(1, std::memory_order_acq_rel) + 1);
  }

  // --- the index calls of one run kind
  bool insert(index& idx, const K& k, uint64_t vid, std::string& buf) {
    if constexpr (k_u64) {
      return idx.insert(k, vid);
    } else {
      codec_.encode(vid, buf);
      return idx.insert(k, buf);
    }
  }
  bool update(index& idx, const K& k, uint64_t vid, std::string& buf) {
    if constexpr (k_u64) {
      return idx.update(k, vid);
    } else {
      codec_.encode(vid, buf);
      return idx.update(k, buf);
    }
  }
  std::optional<R> lookup(index& idx, const K& k) {
    if constexpr (k_u64) {
      return idx.lookup(k);
    } else {
      std::string v;
      if (!idx.lookup(k, &v)) return std::nullopt;
      return v;
    }
  }
  // Up to `want` records from `from`, as (key, value) pairs.
  void scan(index& idx, const K& from, size_t want, std::vector<std::pair<K, R>>& out) {
    out.clear();
    if constexpr (k_u64) {
      std::vector<record> buf(want);
      size_t n = idx.scan(from, want, buf.data());
      for (size_t i = 0; i < n && i <= want; ++i) out.emplace_back(buf[i].key, buf[i].value);
    } else {
      record_buffer buf;
      size_t n = idx.scan(from, want, buf);
      if (n != buf.size()) violation("scan's count differs from the records it appended");
      for (size_t i = 0; i < buf.size(); ++i) out.emplace_back(std::string(buf.key(i)), std::string(buf.value(i)));
    }
  }
  // Every record, in key order.
  void all(index& idx, std::vector<std::pair<K, R>>& out) {
    if constexpr (k_u64) {
      std::vector<record> rs;
      idx.range(0, UINT64_MAX, rs);
      out.clear();
      for (auto& r : rs) out.emplace_back(r.key, r.value);
    } else {
      out.clear();
      std::vector<std::pair<K, R>> part;
      K from;
      for (;;) {
        scan(idx, from, 1024, part);
        out.insert(out.end(), part.begin(), part.end());
        if (part.size() < 1024) break;
        from = part.back().first + '\0';
      }
    }
  }

  // Half the operations go to a few hot keys per worker (inserted and
  // removed over and over), the rest anywhere in its keys.
  static constexpr uint64_t k_hot = 4;
  uint64_t hot(bench::rng& rng) const {
    return keys_ > k_hot + 2 ? 2 + rng() % k_hot : rng() % keys_;  // (0 and 1 are the ends of the space)
  }
  uint64_t pick(bench::rng& rng) const { return rng() % 2 ? hot(rng) : rng() % keys_; }
  // The smallest key after k (or k itself at the top).
  static K after(const K& k) {
    if constexpr (k_u64) return k == UINT64_MAX ? k : k + 1;
    else return k + '\0';
  }

  void worker(index& idx, uint32_t t, const std::atomic<bool>& stop, oracle_map& oracle, std::mutex* serial) {
    bench::rng rng(bench::thread_seed(seed_, t, 0));
    std::vector<std::pair<K, R>> got;
    std::string buf;
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
          K k = key(t, pick(rng));
          auto it = oracle.find(k);
          bool present = it != oracle.end();
          if (op < 30) {
            uint64_t v = next_value(t, k);
            bool r = locked([&] { return insert(idx, k, v, buf); });
            if (r != !present) violation("insert(" + show(k) + ") returned " + std::to_string(r));
            if (r) oracle[k] = v;
          } else if (op < 45) {
            uint64_t v = next_value(t, k);
            bool r = locked([&] { return update(idx, k, v, buf); });
            if (r != present) violation("update(" + show(k) + ") returned " + std::to_string(r));
            if (r) oracle[k] = v;
          } else if (op < 65) {
            bool r = locked([&] { return idx.remove(k); });
            if (r != present) violation("remove(" + show(k) + ") returned " + std::to_string(r));
            if (r) oracle.erase(k);
          } else if (op < 80) {
            auto v = locked([&] { return lookup(idx, k); });
            if (v.has_value() != present || (v && *v != value_of(it->second)))
              violation("lookup(" + show(k) + ") of an own key disagrees with the oracle");
          } else if (op < 90 || !ordered_) {  // an unordered index: lookups instead of scans
            K any = key(static_cast<uint32_t>(rng() % workers_), rng() % keys_);
            auto v = locked([&] { return lookup(idx, any); });
            if (v) check_value(any, *v, "lookup");
          } else {
            // Half the scans start just past another worker's hot key:
            // while that key comes and goes, a reader that takes the node
            // before `from` and then re-reads its link returns the key
            // (below `from`, out of order: the canary's old scan bug).
            K from = rng() % 2 ? after(key(static_cast<uint32_t>(rng() % workers_), hot(rng)))
                               : space_.scan_start(rng, workers_);
            size_t want = 1 + rng() % 128;
            locked([&] { scan(idx, from, want, got); });
            check_scan(t, from, want, got, oracle);
          }
        }
      }
    } catch (const std::exception& e) {
      violation("thread " + std::to_string(t) + " stopped by an exception: " + e.what());
    }
    ops_.fetch_add(ops);
  }

  void check_scan(uint32_t t, const K& from, size_t want, const std::vector<std::pair<K, R>>& r,
                  const oracle_map& oracle) {
    size_t n = r.size();
    if (n > want) return violation("scan returned more records than asked");
    for (size_t i = 0; i < n; ++i) {
      if (r[i].first < from) return violation("scan from " + show(from) + " returned a smaller key");
      if (i && !(r[i - 1].first < r[i].first)) return violation("scan returned keys out of order");
      check_value(r[i].first, r[i].second, "scan");
    }
    // Own keys in the covered interval [from, end] must match the oracle.
    bool to_end = n < want;
    if (!to_end && n == 0) return;
    auto it = oracle.lower_bound(from);
    size_t i = 0;
    for (; it != oracle.end() && (to_end || !(r[n - 1].first < it->first)); ++it) {
      while (i < n && r[i].first < it->first) ++i;
      if (i == n || r[i].first != it->first || r[i].second != value_of(it->second))
        return violation("scan from " + show(from) + " misses or misreports own " + show(it->first));
    }
    for (i = 0; i < n; ++i)
      if (space_.owner_of(r[i].first) == t && !oracle.count(r[i].first))
        return violation("scan returned own " + show(r[i].first) + " that is not present");
  }

  // The whole index against `expected`: every record, point lookups, check().
  void compare(index& idx, const oracle_map& expected, const std::string& when) {
    // Every record by a full scan, or (an unordered index) the count it keeps.
    std::vector<std::pair<K, R>> got;
    if (ordered_) all(idx, got);
    const uint64_t n = ordered_ ? got.size() : idx.stats().records;
    if (n != expected.size())
      violation(when + ": the index holds " + std::to_string(n) + " records, the oracles " +
                std::to_string(expected.size()));
    auto it = expected.begin();
    for (size_t i = 0; i < got.size() && it != expected.end(); ++i, ++it)
      if (got[i].first != it->first || got[i].second != value_of(it->second)) {
        violation(when + ": first difference at " + show(it->first));
        break;
      }
    for (auto& [k, v] : expected)
      if (lookup(idx, k) != value_of(v)) {
        violation(when + ": lookup(" + show(k) + ") differs from the oracle");
        break;
      }
    auto c = idx.check();
    if (!c.ok) violation(when + ": check() failed: " + c.message);
  }

  stress_records records(const oracle_map& expected) const {
    stress_records r;
    r.bytes = !k_u64;
    for (auto& [k, v] : expected) {
      if constexpr (k_u64) r.u64.emplace(k, v);
      else r.by_key.emplace(k, value_of(v));
    }
    return r;
  }

  uint64_t ops() const { return ops_.load(); }
  uint64_t violations() const { return violations_.load(); }
  std::atomic<uint64_t>& ops_counter() { return ops_; }

 private:
  uint32_t workers_;
  uint64_t keys_, seed_;
  stress::key_space<K> space_;
  stress::value_codec codec_;
  std::vector<std::atomic<uint64_t>> seq_;
  bool ordered_;  // index_entry::ordered: scans checked (else lookups)
  std::atomic<uint64_t> ops_{0}, violations_{0};
  std::mutex print_mu_;
};

// --- built-in extra checks (also examples of the extension point)

uint64_t stats_final(index& idx, const stress_records& expected) {
  auto s = idx.stats();
  if (s.records == expected.size()) return 0;
  std::fprintf(stderr, "stress: violation: stats().records is %" PRIu64 ", expected %zu\n", s.records,
               expected.size());
  return 1;
}

// 200 random range(lo, hi) queries against the expected records `m`; lo
// and hi are mostly its keys, else `any()`.
template <class M, class Range, class Any>
uint64_t ranges_match(const M& m, Range&& range, Any&& any) {
  bench::rng rng(m.size());
  std::vector<typename M::key_type> keys;
  for (auto& kv : m) keys.push_back(kv.first);
  uint64_t bad = 0;
  for (int i = 0; i < 200 && !keys.empty(); ++i) {
    auto lo = rng() % 3 ? keys[rng() % keys.size()] : any(rng);
    auto hi = rng() % 3 ? keys[rng() % keys.size()] : any(rng);
    if (hi < lo) std::swap(lo, hi);
    std::vector<std::pair<typename M::key_type, typename M::mapped_type>> got;
    range(lo, hi, got);
    auto a = m.lower_bound(lo), b = m.upper_bound(hi);
    bool same = static_cast<size_t>(std::distance(a, b)) == got.size();
    size_t j = 0;
    for (auto it = a; same && it != b; ++it, ++j) same = got[j].first == it->first && got[j].second == it->second;
    if (!same) ++bad;
  }
  if (bad) std::fprintf(stderr, "stress: violation: %" PRIu64 " of 200 range() queries differ\n", bad);
  return bad;
}

uint64_t range_final(index& idx, const stress_records& e) {
  if (auto entry = find_index(idx.name()); entry && !entry->ordered) {
    std::fprintf(stderr, "stress: --check range skipped: %s is unordered (no range)\n", idx.name().c_str());
    return 0;
  }
  if (!e.bytes)
    return ranges_match(
        e.u64,
        [&](uint64_t lo, uint64_t hi, auto& out) {
          std::vector<record> rs;
          idx.range(lo, hi, rs);
          for (auto& r : rs) out.emplace_back(r.key, r.value);
        },
        [](bench::rng& rng) { return rng(); });
  return ranges_match(
      e.by_key,
      [&](const std::string& lo, const std::string& hi, auto& out) {
        record_buffer rb;
        idx.range(lo, hi, rb);
        for (size_t i = 0; i < rb.size(); ++i) out.emplace_back(std::string(rb.key(i)), std::string(rb.value(i)));
      },
      [](bench::rng& rng) { return std::string(rng() % 3, static_cast<char>(rng())); });
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

struct run_args {
  options o;
  uint32_t threads;
  double seconds;
  uint64_t keys, seed;
  std::vector<const stress_check*> checks;
  bool concurrent;  // the index takes concurrent callers
  bool ordered;     // the index scans (index_entry::ordered)
};

template <class K>
int run_stress(run_args& ra, stress::key_space<K> space, uint64_t value_size) {
  options& o = ra.o;
  uint32_t check_threads = 0;
  for (auto* c : ra.checks) check_threads += c->concurrent ? 1 : 0;
  stress_run<K> run(ra.threads, ra.threads + check_threads, ra.keys, ra.seed, std::move(space),
                    stress::value_codec(value_size), ra.ordered);
  auto idx = open(o);
  std::mutex serial_mu;  // indexes that are not concurrent run under one lock
  std::mutex* serial = ra.concurrent ? nullptr : &serial_mu;
  serial_index locked(*idx, serial_mu);  // what a check's own threads call (a single-threaded index)
  index& shared = serial ? static_cast<index&>(locked) : *idx;
  std::atomic<bool> stop{false};
  std::vector<typename stress_run<K>::oracle_map> oracles(ra.threads);
  std::vector<std::unique_ptr<stress_context>> contexts;
  std::atomic<uint64_t> check_violations{0};
  std::vector<std::thread> pool;
  for (uint32_t t = 0; t < ra.threads; ++t)
    pool.emplace_back([&, t] { run.worker(*idx, t, stop, oracles[t], serial); });
  uint32_t owner = ra.threads;
  if constexpr (std::is_same_v<K, uint64_t>)
    for (auto* c : ra.checks) {
      if (!c->concurrent) continue;
      uint32_t my = owner++;
      contexts.push_back(std::make_unique<stress_context>(stress_context{
          shared, stop, ra.seed + my, [&run, my](uint64_t i) { return run.key(my, i); }, {}, &run.ops_counter(),
          [&run, name = c->name](const std::string& m) { run.violation("--check " + name + ": " + m); }}));
      auto* ctx = contexts.back().get();
      pool.emplace_back([c, ctx, &check_violations] { check_violations += c->concurrent(*ctx); });
    }
  std::this_thread::sleep_for(std::chrono::duration<double>(ra.seconds));
  stop = true;
  for (auto& th : pool) th.join();

  typename stress_run<K>::oracle_map expected;
  for (auto& m : oracles) expected.insert(m.begin(), m.end());
  if constexpr (std::is_same_v<K, uint64_t>)
    for (auto& c : contexts) expected.insert(c->oracle.begin(), c->oracle.end());
  const stress_records records = run.records(expected);
  auto finals = [&](index& x, const std::string& when) {
    run.compare(x, expected, when);
    for (auto* c : ra.checks)
      if (c->final) check_violations += c->final(x, records);
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

}  // namespace

int cmd_stress(args& a) {
  bool pool_given = a.has("pool");
  run_args ra;
  ra.o = index_options(a, pm::open_mode::must_create);
  options& o = ra.o;
  ra.threads = static_cast<uint32_t>(a.u64("threads", 2, 1, 256));
  ra.seconds = a.real("seconds", 5, 0.001, 1e6);
  ra.keys = a.u64("keys", 20000, 2, uint64_t{1} << 32);  // per thread
  ra.seed = a.u64("seed", std::random_device{}(), 0, UINT64_MAX);
  ra.checks = parse_checks(a.str("check", ""));
  data_options d = read_data_options(a, ra.seed);
  bool keep = a.flag("keep");
  if (!a.has("pool-size")) o.pool_size = uint64_t{256} << 20;
  a.finish();
  if (ra.threads < 1 || ra.threads > 256) throw error(errc::usage, "--threads must be 1..256");
  if (ra.keys < 2) throw error(errc::usage, "--keys must be at least 2");
  if (!pool_given) {
    remove_stale_pools("stress", "/dev/shm", "pmindex-stress-");
    o.pool_path = "/dev/shm/pmindex-stress-" + scratch_tag() + ".pool";
  }
  o.quiet = true;
  auto e = find_index(o.index);
  if (!e) throw error(errc::usage, "unknown index '" + o.index + "' (see `pmindex list`)");
  if (bench::discards_records(*e))
    throw error(errc::usage, o.index + " stores nothing (the harness's own baseline, for `pmindex bench`): nothing to "
                             "stress-test");
  // stress always creates its pool: persist, or dram for a volatile index.
  if (!o.mode) o.mode = e->persistent() ? pm::mode::persist : pm::mode::dram;
  ra.concurrent = e->concurrent;
  ra.ordered = e->ordered;
  for (auto* c : ra.checks)
    if (c->needs_scans && !e->ordered)
      throw error(errc::usage, "--check " + c->name + " reads with range queries: " + o.index +
                                   " is unordered (no scan or range)");
  for (auto* c : ra.checks)
    if (c->concurrent && d.ds)
      throw error(errc::usage, "--check " + c->name + " runs on stress's own u64 keys: not with --dataset");
  if (d.bytes && !d.ds) d.ds = bench::make_dataset("u64-bytes", ra.seed);
  prepare_byte_run(o, d);
  // The pool is removed at the end (unless --keep), but never a file that
  // was there before: the open refuses an existing --pool, which stays as it was.
  const bool existed = ::access(o.pool_path.c_str(), F_OK) == 0;
  struct remover {
    std::string path;
    bool active;
    ~remover() {
      if (active) ::unlink(path.c_str());
    }
  } cleanup{o.pool_path, !keep && o.mode != pm::mode::dram && !existed};

  std::fprintf(stderr,
               "stress %s: %u threads, %.1f s, %" PRIu64 " keys per thread, mode %s, seed %" PRIu64 "%s%s\n",
               o.index.c_str(), ra.threads, ra.seconds, ra.keys, std::string(pm::to_string(*o.mode)).c_str(),
               ra.seed, d.ds ? ", " : "", d.describe().c_str());
  uint32_t modulus = ra.threads;
  for (auto* c : ra.checks) modulus += c->concurrent ? 1 : 0;
  if (const uint64_t limit = key_limit(*e, o.params)) {  // keys 0 .. limit-1
    using s64 = stress::key_space<uint64_t>;
    using sbytes = stress::key_space<std::string>;
    if (d.ds && d.ds->name() != "u64" && d.ds->name() != "u64-bytes")
      throw error(errc::usage, o.index + " takes integer keys below " + std::to_string(limit) +
                                   ": --dataset must be u64 or u64-bytes");
    if (d.bytes) return run_stress<std::string>(ra, sbytes(modulus, ra.keys, sbytes::below{limit}), d.value_size);
    return run_stress<uint64_t>(ra, s64(modulus, ra.keys, s64::below{limit}), 8);
  }
  if (d.bytes)
    return run_stress<std::string>(ra, stress::key_space<std::string>(modulus, ra.keys, *d.ds), d.value_size);
  if (d.ds) return run_stress<uint64_t>(ra, stress::key_space<uint64_t>(modulus, ra.keys, *d.ds), 8);
  return run_stress<uint64_t>(ra, stress::key_space<uint64_t>(modulus, ra.keys, ra.seed), 8);
}

}  // namespace pmindex::cli

// The recorded history a crash test runs: random operations over a small key
// space, in phases that fill the index and then empty it, so that node
// splits, growth, merges and removes-to-empty all happen within a few
// hundred operations. Single-threaded histories are fully deterministic for
// a seed (given a deterministic index); threaded ones are not.
#include <barrier>
#include <cstdio>
#include <set>
#include <thread>

#include "checker.hpp"
#include "image.hpp"
#include "pmindex/error.hpp"

namespace pmindex::crash {

const char* to_string(op_kind k) {
  switch (k) {
    case op_kind::insert: return "insert";
    case op_kind::update: return "update";
    case op_kind::remove: return "remove";
    case op_kind::lookup: return "lookup";
    case op_kind::scan: return "scan";
  }
  return "?";
}

std::string hex(uint64_t v) {
  char b[24];
  std::snprintf(b, sizeof b, "0x%llx", static_cast<unsigned long long>(v));
  return b;
}

key_state apply(const op_rec& o, key_state s) {
  switch (o.kind) {
    case op_kind::insert:
      if (!s.present) s = {true, o.value};
      break;
    case op_kind::update:
      if (s.present) s.value = o.value;
      break;
    case op_kind::remove: s = {}; break;
    default: break;
  }
  return s;
}

// Keys: half dense small integers (full radix nodes, node growth), half
// sparse 64-bit keys around four random prefixes diverging at random depths
// (prefix splits). None is 0 or in the probe range used after recovery.
void checker::make_keys() {
  std::mt19937_64 rng(mix64(c_.seed ^ 0x6b657973));
  uint64_t prefix[4];
  for (auto& p : prefix) p = rng() & 0x0FFFFFFFFFFFFFFFull;
  std::set<uint64_t> seen;
  while (keys_.size() < c_.keys) {
    uint64_t k;
    if (keys_.size() % 2 == 0) {
      k = keys_.size() / 2 + 1;
    } else {
      unsigned depth = 1 + rng() % 7;  // low bytes that vary
      uint64_t mask = (uint64_t{1} << (8 * depth)) - 1;
      k = (prefix[rng() % 4] & ~mask) | (rng() & mask);
      k = (k & 0x0FFFFFFFFFFFFFFFull) | 0x0100000000000000ull;
    }
    if (!seen.insert(k).second) continue;
    keys_.push_back(k);
  }
  for (uint32_t i = 0; i < keys_.size(); ++i) key_index_[keys_[i]] = i;
  // Ownership: one thread owns everything; with threads, `disjoint` splits
  // the keys, `shared` shares them all, `mixed` shares one key in four.
  owner_.assign(keys_.size(), 0);
  // Owned keys go round-robin over the threads by their own count: with
  // `mixed`, i % threads would leave a thread no key when threads = 4 (the
  // keys i % 4 == 3 are the shared ones), and a thread without keys skips
  // operations, which leaves gaps in its log that the oracle stops at.
  if (c_.threads > 1)
    for (uint32_t i = 0, owned = 0; i < keys_.size(); ++i) {
      bool shared = c_.keyset == "shared" || (c_.keyset == "mixed" && i % 4 == 3);
      owner_[i] = shared ? k_shared : owned++ % c_.threads;
    }
}

void checker::live_violation(const std::string& m) {
  // A wrong result in the live run is a bug too, crash or not.
  static std::mutex mu;
  std::lock_guard lk(mu);
  ++r_.violations;
  if (r_.messages.size() < c_.details) r_.messages.push_back("live run: " + m);
  if (c_.print_violations && r_.messages.size() <= c_.details) std::fprintf(stderr, "violation: live run: %s\n", m.c_str());
}

// One operation of thread t: chosen so the key space fills and empties in
// turn; writes pick absent keys to insert and present keys to remove or
// update most of the time, so most operations change the index.
void checker::do_op(uint32_t t, uint64_t j, std::mt19937_64& rng) {
  const uint64_t phase_len = std::max<uint64_t>(8, c_.keys / c_.threads);
  const bool grow = (j / phase_len) % 2 == 0;
  uint32_t ki = 0;
  unsigned r = rng() % 100;
  op_kind kind = grow ? (r < 55 ? op_kind::insert : r < 70 ? op_kind::update : r < 80 ? op_kind::remove
                                 : r < 95 ? op_kind::lookup : op_kind::scan)
                      : (r < 10 ? op_kind::insert : r < 25 ? op_kind::update : r < 80 ? op_kind::remove
                                 : r < 95 ? op_kind::lookup : op_kind::scan);
  bool use_shared = c_.threads > 1 && c_.keyset != "disjoint" && (c_.keyset == "shared" || rng() % 2);
  if (use_shared) {
    do ki = static_cast<uint32_t>(rng() % keys_.size());
    while (owner_[ki] != k_shared);
  } else {
    // Prefer keys whose state makes the operation succeed (90%).
    bool want_present = kind != op_kind::insert;
    bool prefer = rng() % 10 != 0;
    uint32_t fallback = UINT32_MAX;
    uint32_t start = static_cast<uint32_t>(rng() % keys_.size());
    ki = UINT32_MAX;
    for (uint32_t n = 0; n < keys_.size(); ++n) {
      uint32_t i = (start + n) % keys_.size();
      if (owner_[i] != t) continue;
      if (fallback == UINT32_MAX) fallback = i;
      if (!prefer || ref_[i].present == want_present) {
        ki = i;
        break;
      }
    }
    if (ki == UINT32_MAX) ki = fallback;
    if (ki == UINT32_MAX) return;  // this thread owns no key
  }
  op_rec& o = logs_[t][j];
  o.kind = kind;
  o.thread = t;
  o.ki = ki;
  o.key = keys_[ki];
  o.value = 0xA500000000000000ull | (uint64_t{t + 1} << 40) | (j + 1);  // unique per operation
  if (owner_[ki] == t) o.prev = ref_[ki];
  __atomic_store_n(&o.start, clock_.fetch_add(1), __ATOMIC_RELEASE);
  record buf[16];
  size_t n = 0;
  switch (kind) {
    case op_kind::insert: o.ok = idx_->insert(o.key, o.value); break;
    case op_kind::update: o.ok = idx_->update(o.key, o.value); break;
    case op_kind::remove: o.ok = idx_->remove(o.key); break;
    case op_kind::lookup: {
      auto v = idx_->lookup(o.key);
      o.ok = v.has_value();
      o.got = v.value_or(0);
      break;
    }
    case op_kind::scan: n = idx_->scan(o.key, 16, buf); break;
  }
  if (owner_[ki] == t && !calibrating_) {
    // Exact results for keys nobody else writes.
    key_state s = o.prev, after = apply(o, s);
    bool expect_ok = kind == op_kind::insert ? !s.present : s.present;
    if ((kind == op_kind::insert || kind == op_kind::update || kind == op_kind::remove || kind == op_kind::lookup) &&
        o.ok != expect_ok)
      live_violation(std::string(to_string(kind)) + "(" + std::to_string(o.key) + ") returned " +
                     (o.ok ? "true/found" : "false/absent") + ", expected the opposite");
    else if (kind == op_kind::lookup && o.ok && o.got != s.value)
      live_violation("lookup(" + std::to_string(o.key) + ") returned " + hex(o.got) + ", expected " + hex(s.value));
    if (kind == op_kind::scan && c_.threads == 1) {
      std::vector<record> exp;
      for (auto& [k, i] : key_index_)
        if (k >= o.key && ref_[i].present && exp.size() < 16) exp.push_back({k, ref_[i].value});
      size_t want = exp.size();
      if (n != want || !std::equal(exp.begin(), exp.end(), buf))
        live_violation("scan(" + std::to_string(o.key) + ", 16) returned " + std::to_string(n) +
                       " records, not the expected " + std::to_string(want));
    }
    ref_[ki] = after;  // before `end`: a completed operation is in ref_
  }
  __atomic_store_n(&o.end, clock_.fetch_add(1), __ATOMIC_RELEASE);
}

void checker::run_thread(uint32_t t) {
  std::mt19937_64 rng(mix64(c_.seed * 1000003 + t));
  for (uint64_t j = 0; j < logs_[t].size() && !stop_; ++j) {
    if (c_.threads > 1 && obs_->crash_pending()) obs_->park();
    do_op(t, j, rng);
  }
}

// Runs the whole history on a fresh observed pool. With `calibrate`, no
// crash point is taken: the run only counts the events of the history.
void checker::run_history(bool calibrate) {
  calibrating_ = calibrate;
  obs_ = std::make_unique<shadow_observer>(c_.threads);
  if (!calibrate) obs_->set_listener(this);
  ref_.assign(keys_.size(), {});
  logs_.assign(c_.threads, {});
  for (uint32_t t = 0; t < c_.threads; ++t)
    logs_[t].resize(c_.ops / c_.threads + (t < c_.ops % c_.threads ? 1 : 0));
  clock_ = 1;
  phase_ = phase::creating;

  options o;
  o.index = c_.index;
  o.params = c_.params;
  o.pool_size = c_.pool_size;
  o.mode = pm::mode::persist;
  o.observer = obs_.get();
  o.quiet = true;
  idx_ = open(o);
  phase_ = phase::running;

  if (c_.threads == 1) {
    obs_->register_worker();
    run_thread(0);
  } else {
    std::barrier start(c_.threads + 1), end(c_.threads);
    std::vector<std::thread> ts;
    for (uint32_t t = 0; t < c_.threads; ++t)
      ts.emplace_back([&, t] {
        obs_->register_worker();
        start.arrive_and_wait();
        try {
          run_thread(t);
        } catch (const error& e) {
          live_violation(std::string("operation threw: ") + e.what());
        }
        obs_->worker_done();
        // Stay alive until every thread is done: an exiting thread takes
        // the pool registry lock, which a forked child would then miss.
        end.arrive_and_wait();
      });
    obs_->register_worker();  // the main thread, asleep in join
    start.arrive_and_wait();
    for (auto& t : ts) t.join();
  }
  phase_ = phase::done;
  r_.events = obs_->events();
  if (!calibrate) obs_->crash_now();  // the end of the history is a crash point too
  obs_->set_listener(nullptr);
  r_.final_stats = idx_->stats().extra;
  idx_->close();
  idx_.reset();
}

}  // namespace pmindex::crash

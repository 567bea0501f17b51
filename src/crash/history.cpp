// The recorded history a crash test runs: random operations over a small key
// space, in phases that fill the index and then empty it, so that node
// splits, growth, merges and removes-to-empty all happen within a few
// hundred operations. Single-threaded histories are fully deterministic for
// a seed (given a deterministic index); threaded ones are not.
#include <barrier>
#include <cstdio>
#include <mutex>
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
void checker::do_op(uint32_t t, uint64_t j, bench::rng& rng) {
  const uint64_t phase_len = std::max<uint64_t>(8, c_.keys / c_.threads);
  const bool grow = (j / phase_len) % 2 == 0;
  uint32_t ki = 0;
  unsigned r = rng() % 100;
  op_kind kind = grow ? (r < 55 ? op_kind::insert : r < 70 ? op_kind::update : r < 80 ? op_kind::remove
                                 : r < 95 ? op_kind::lookup : op_kind::scan)
                      : (r < 10 ? op_kind::insert : r < 25 ? op_kind::update : r < 80 ? op_kind::remove
                                 : r < 95 ? op_kind::lookup : op_kind::scan);
  if (kind == op_kind::scan && !ordered_) kind = op_kind::lookup;  // an unordered index has no scan
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
  o.value = 0xA500000000000000ull | (uint64_t{t + 1} << 40) | (j + 1);  // unique per operation
  if (owner_[ki] == t) o.prev = ref_[ki];
  const std::string& key = keys_[ki];
  static thread_local std::string vbuf, got;
  static thread_local record_buffer sbuf;
  sbuf.clear();
  // Taken before the start stamp and held past the end stamp: the threads'
  // operations do not overlap, a history a sequential index can be held to.
  // A thread waiting here sleeps in the kernel, which a crash point counts
  // as parked (shadow.hpp).
  std::unique_lock<std::mutex> serial;
  if (serial_) serial = std::unique_lock(serial_mu_);
  __atomic_store_n(&o.start, clock_.fetch_add(1), __ATOMIC_RELEASE);
  size_t n = 0;
  switch (kind) {
    case op_kind::insert: o.ok = call_insert(*idx_, key, o.value, vbuf); break;
    case op_kind::update: o.ok = call_update(*idx_, key, o.value, vbuf); break;
    case op_kind::remove: o.ok = call_remove(*idx_, key); break;
    case op_kind::lookup:
      o.ok = call_lookup(*idx_, key, &got);
      o.got = o.ok ? read_tag(got) : 0;
      break;
    case op_kind::scan: n = call_scan(*idx_, key, 16, sbuf); break;
  }
  if (owner_[ki] == t && !calibrating_) {
    // Exact results for keys nobody else writes.
    key_state s = o.prev, after = apply(o, s);
    bool expect_ok = kind == op_kind::insert ? !s.present : s.present;
    if ((kind == op_kind::insert || kind == op_kind::update || kind == op_kind::remove || kind == op_kind::lookup) &&
        o.ok != expect_ok)
      live_violation(std::string(to_string(kind)) + "(" + show_key(ki) + ") returned " +
                     (o.ok ? "true/found" : "false/absent") + ", expected the opposite");
    else if (kind == op_kind::lookup && o.ok && !value_is(s.value, got))
      live_violation("lookup(" + show_key(ki) + ") returned " + show(recovered(ki, &got, {})) + ", expected " +
                     hex(s.value));
    if (kind == op_kind::scan && c_.threads == 1) {
      size_t want = 0;
      bool same = true;
      for (auto it = key_index_.lower_bound(key); it != key_index_.end() && want < 16; ++it) {
        if (!ref_[it->second].present) continue;
        same = same && want < n && sbuf.key(want) == it->first && value_is(ref_[it->second].value, sbuf.value(want));
        ++want;
      }
      if (n != want || !same)
        live_violation("scan(" + show_key(ki) + ", 16) returned " + std::to_string(n) + " records" +
                       (n == want ? ", not the expected ones" : ", not the expected " + std::to_string(want)));
    }
    ref_[ki] = after;  // before `end`: a completed operation is in ref_
  }
  __atomic_store_n(&o.end, clock_.fetch_add(1), __ATOMIC_RELEASE);
}

void checker::run_thread(uint32_t t) {
  bench::rng rng(bench::thread_seed(c_.seed, t, 0));
  for (uint64_t j = 0; j < logs_[t].size() && !stop_; ++j) {
    if (obs_->crash_pending()) obs_->park();  // a background thread may crash
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
  o.params = c_.params;  // keys=bytes added by the constructor for byte runs
  o.pool_size = c_.pool_size;
  o.mode = c_.mode;
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

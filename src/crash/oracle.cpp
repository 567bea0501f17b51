// The oracle, run in the forked child on one recovered crash image.
//
// Keys a single thread writes (every key of a single-threaded history) are
// checked exactly: the recovered state equals the state after the thread's
// completed operations, or, for the key of its operation in flight, the
// state before or after that operation.
//
// Keys several threads write are checked per key (linearizability is
// local, and every operation touches one key). Values are unique per
// operation, so a recovered value names the operation w that wrote it. With
// a.end < b.start meaning "a returned before b was invoked", the checks are:
//   R1  a recovered value was written by an operation that is in flight or
//       completed successfully (never by a failed or unknown one);
//   R2  if w completed, no completed operation x on the key started after w
//       returned and either changed the key (a successful write or remove) or
//       read something other than w's value: every linearization puts x
//       after w, and nothing can write w's value again;
//   R3  a key recovered absent: for every completed successful write, and
//       every completed lookup that found a value, some remove (completed
//       successfully, or in flight) did not return before it started.
// These are necessary conditions (sound: they never reject a state some
// linearization of completed plus a subset of in-flight operations
// explains); they do not search for a full linearization.
#include <sys/mman.h>

#include "checker.hpp"
#include "pmindex/error.hpp"

namespace pmindex::crash {

namespace {

std::string show(const key_state& s) { return s.present ? "value " + hex(s.value) : "absent"; }

bool writes(const op_rec& o) { return o.kind == op_kind::insert || o.kind == op_kind::update; }
bool completed(const op_rec& o) { return o.end != 0; }
bool in_flight(const op_rec& o) { return o.start != 0 && o.end == 0; }

// Probe keys used after recovery; the key space never holds them.
constexpr uint64_t k_probe_base = 0xF000000000000000ull;
constexpr unsigned k_probes = 24;

}  // namespace

std::string checker::check_shared(uint32_t ki, const key_state& got) {
  std::vector<const op_rec*> ops;
  for (auto& log : logs_)
    for (auto& o : log) {
      if (!o.start) break;
      if (o.ki == ki && o.kind != op_kind::scan) ops.push_back(&o);
    }
  const std::string key = "shared key " + std::to_string(keys_[ki]);
  if (got.present) {
    const op_rec* w = nullptr;
    for (auto* o : ops)
      if (writes(*o) && o->value == got.value) w = o;
    if (!w) return key + ": recovered value " + hex(got.value) + " was never written";
    if (completed(*w) && !w->ok)
      return key + ": recovered value " + hex(got.value) + " of a " + to_string(w->kind) +
             " that returned false";
    if (completed(*w))
      for (auto* x : ops) {  // R2
        if (x == w || !completed(*x) || x->start <= w->end) continue;
        bool changes = (writes(*x) || x->kind == op_kind::remove) && x->ok;
        bool read_other = x->kind == op_kind::lookup && (!x->ok || x->got != got.value);
        if (changes || read_other)
          return key + ": recovered value " + hex(got.value) + " of a completed " +
                 to_string(w->kind) + ", but a later completed " + to_string(x->kind) + " of thread " +
                 std::to_string(x->thread) + (changes ? " changed the key" : " read another state") +
                 " (a completed operation was lost)";
      }
    return "";
  }
  for (auto* p : ops) {  // R3
    if (!completed(*p) || !p->ok || !(writes(*p) || p->kind == op_kind::lookup)) continue;
    bool removable = false;
    for (auto* r : ops)
      if (r->kind == op_kind::remove && (in_flight(*r) || (r->ok && r->end > p->start))) removable = true;
    if (!removable)
      return key + ": recovered absent, but a completed " + std::string(to_string(p->kind)) + " of thread " +
             std::to_string(p->thread) + (writes(*p) ? " wrote it" : " read it") + " and no remove can follow";
  }
  return "";
}

std::string checker::check_keys(const std::map<uint64_t, uint64_t>& content) {
  for (auto& [k, v] : content)
    if (!key_index_.count(k)) return "recovered key " + std::to_string(k) + " was never inserted";
  // The operation each thread has in flight (at most one).
  std::vector<const op_rec*> flying(logs_.size(), nullptr);
  for (auto& log : logs_)
    for (auto& o : log) {
      if (!o.start) break;
      if (!o.end) flying[o.thread] = &o;
    }
  for (uint32_t ki = 0; ki < keys_.size(); ++ki) {
    auto it = content.find(keys_[ki]);
    key_state got = it == content.end() ? key_state{} : key_state{true, it->second};
    if (owner_[ki] == k_shared) {
      auto m = check_shared(ki, got);
      if (!m.empty()) return m;
      continue;
    }
    const op_rec* f = flying[owner_[ki]];
    if (f && f->ki == ki) {
      key_state before = f->prev, after = apply(*f, f->prev);
      if (got != before && got != after)
        return "key " + std::to_string(keys_[ki]) + " recovered " + show(got) + "; the " + to_string(f->kind) +
               " in flight allows only " + show(before) + " (not applied) or " + show(after) + " (applied)";
    } else if (got != ref_[ki]) {
      return "key " + std::to_string(keys_[ki]) + " recovered " + show(got) + ", but the completed operations left " +
             show(ref_[ki]) + (ref_[ki].present && !got.present ? " (a completed operation was lost)" : "");
    }
  }
  return "";
}

namespace {

// Reads the whole index with scan and checks it against lookups.
std::string read_all(index& idx, std::map<uint64_t, uint64_t>& out) {
  out.clear();
  record buf[64];
  uint64_t from = 0;
  for (size_t guard = 0; guard < 1000000; ++guard) {
    size_t n = idx.scan(from, 64, buf);
    if (n > 64) return "scan returned more records than asked";
    for (size_t i = 0; i < n; ++i) {
      if (buf[i].key < from || (!out.empty() && buf[i].key <= out.rbegin()->first))
        return "scan out of order at key " + std::to_string(buf[i].key);
      out[buf[i].key] = buf[i].value;
    }
    if (n < 64 || buf[n - 1].key == UINT64_MAX) break;
    from = buf[n - 1].key + 1;
  }
  for (auto& [k, v] : out) {
    auto got = idx.lookup(k);
    if (got != v)
      return "lookup(" + std::to_string(k) + ") gives " + (got ? std::to_string(*got) : "nothing") +
             " but scan gives " + std::to_string(v);
  }
  return "";
}

}  // namespace

// After recovery the index must work: inserts that allocate (a block that
// recovery wrongly freed would be handed out twice), removes, updates.
std::string checker::check_usable(index& idx, std::map<uint64_t, uint64_t> content) {
  for (unsigned i = 0; i < k_probes; ++i) {
    uint64_t k = k_probe_base + i * 0x10001ull;
    if (!idx.insert(k, 0xBEEF0000u + i)) return "after recovery: insert of a new key returned false";
    content[k] = 0xBEEF0000u + i;
  }
  unsigned n = 0;
  for (auto it = content.begin(); it != content.end(); ++n) {
    if (n % 2 == 0) {
      if (!idx.remove(it->first)) return "after recovery: remove(" + std::to_string(it->first) + ") returned false";
      it = content.erase(it);
    } else {
      if (!idx.update(it->first, it->second + 1))
        return "after recovery: update(" + std::to_string(it->first) + ") returned false";
      ++it->second;
      ++it;
    }
  }
  auto cr = idx.check();
  if (!cr.ok) return "after recovery and more operations, check() fails: " + cr.message;
  std::map<uint64_t, uint64_t> now;
  auto m = read_all(idx, now);
  if (!m.empty()) return "after recovery and more operations: " + m;
  if (now != content) return "after recovery, inserts/removes/updates give the wrong content";
  return "";
}

std::string checker::oracle(char* image, bool frozen, uint64_t parent_used) {
  options o;
  o.index = c_.index;
  o.mode = pm::mode::persist;
  o.open = pm::open_mode::must_exist;
  o.image = image;
  o.image_size = obs_->size();
  o.quiet = true;
  std::unique_ptr<index> idx;
  try {
    idx = open(o);
  } catch (const error& e) {
    // A crash before creation completed may leave no pool (a typed error).
    if (phase_ == phase::creating) return "";
    return std::string("recovery failed: ") + e.what();
  }
  auto cr = idx->check();
  if (!cr.ok) return "check() after recovery: " + cr.message;
  std::map<uint64_t, uint64_t> content;
  auto m = read_all(*idx, content);
  if (!m.empty()) return "after recovery: " + m;
  if (phase_ == phase::creating) {
    if (!content.empty()) return "a pool that crashed during creation holds records";
  } else {
    m = check_keys(content);
    if (!m.empty()) return m;
  }
  // Allocation: the rebuilt heap holds exactly the traced blocks (tracing
  // itself throws for a block reachable twice), and a crash image can only
  // reach blocks the live pool had handed out: reaching one it had freed is
  // a use-after-free (the free came before its unlink was durable).
  const auto& rep = idx->report();
  if (!rep.created) {
    auto u = idx->pool().usage();
    if (u.used_blocks != rep.traced_blocks)
      return "after recovery the heap holds " + std::to_string(u.used_blocks) + " blocks but tracing found " +
             std::to_string(rep.traced_blocks);
    if (frozen && parent_used != UINT64_MAX && rep.traced_blocks > parent_used)
      return "recovery reaches " + std::to_string(rep.traced_blocks) + " blocks, but only " +
             std::to_string(parent_used) + " were allocated at the crash (a freed block is still reachable)";
  }
  // Recovery must survive a crash of its own: a second recovery of what the
  // first one left (nothing clean-closed) gives the same index.
  idx->abandon();
  idx.reset();
  try {
    idx = open(o);
  } catch (const error& e) {
    return std::string("a second recovery (after recovering and crashing again) failed: ") + e.what();
  }
  cr = idx->check();
  if (!cr.ok) return "check() after a second recovery: " + cr.message;
  std::map<uint64_t, uint64_t> again;
  m = read_all(*idx, again);
  if (!m.empty()) return "after a second recovery: " + m;
  if (again != content) return "a second recovery changed the records";
  return check_usable(*idx, content);
}

}  // namespace pmindex::crash

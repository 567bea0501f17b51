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
//
// Byte values: the history keeps each operation's value id; a recovered
// value is matched against the ids of the key's writes with
// value_source::matches (exact bytes, exact size). Values of 8 bytes or
// more are distinct per id; shorter ones may be shared by several writes,
// and a state then passes if one of them explains it. A lookup records a
// hash of the bytes it read (read_tag) for R2.
#include <sys/mman.h>

#include "checker.hpp"
#include "pmindex/error.hpp"

namespace pmindex::crash {

namespace {

bool writes(const op_rec& o) { return o.kind == op_kind::insert || o.kind == op_kind::update; }
bool completed(const op_rec& o) { return o.end != 0; }
bool in_flight(const op_rec& o) { return o.start != 0 && o.end == 0; }

}  // namespace

// The state of key `ki` recovered with value bytes *v (null: absent), its
// value named by the id of an operation that wrote exactly those bytes:
// first among `prefer` (the states the check allows, so short values that
// several operations share resolve to the allowed one), else any write of
// the key, else k_foreign.
key_state checker::recovered(uint32_t ki, const std::string* v, std::initializer_list<key_state> prefer) const {
  if (!v) return {};
  if (!bytes_) return {true, v->size() == 8 ? value_u64(*v) : k_foreign};
  for (auto& s : prefer)
    if (s.present && value_is(s.value, *v)) return {true, s.value};
  for (auto& log : logs_)
    for (auto& o : log) {
      if (!o.start) break;
      if (o.ki == ki && writes(o) && value_is(o.value, *v)) return {true, o.value};
    }
  return {true, k_foreign};
}

// Shared keys: R1..R3 (above). With byte values several writers may have
// written the same bytes (values under 8 bytes): the state passes if one of
// them explains it.
std::string checker::check_shared(uint32_t ki, const std::string* got) {
  std::vector<const op_rec*> ops;
  for (auto& log : logs_)
    for (auto& o : log) {
      if (!o.start) break;
      if (o.ki == ki && o.kind != op_kind::scan) ops.push_back(&o);
    }
  const std::string key = "shared key " + show_key(ki);
  if (got) {
    std::string first;
    bool any = false;
    for (auto* w : ops) {
      if (!writes(*w) || !value_is(w->value, *got)) continue;
      any = true;
      std::string m;
      if (completed(*w) && !w->ok) {
        m = key + ": recovered value " + hex(w->value) + " of a " + to_string(w->kind) + " that returned false";
      } else if (completed(*w)) {
        const uint64_t tag = read_tag(value_of(w->value));
        for (auto* x : ops) {  // R2
          if (x == w || !completed(*x) || x->start <= w->end) continue;
          bool changes = (writes(*x) || x->kind == op_kind::remove) && x->ok;
          bool read_other = x->kind == op_kind::lookup && (!x->ok || x->got != tag);
          if (changes || read_other) {
            m = key + ": recovered value " + hex(w->value) + " of a completed " + to_string(w->kind) +
                ", but a later completed " + to_string(x->kind) + " of thread " + std::to_string(x->thread) +
                (changes ? " changed the key" : " read another state") + " (a completed operation was lost)";
            break;
          }
        }
      }
      if (m.empty()) return "";
      if (first.empty()) first = m;
    }
    if (!any)
      return key + ": recovered " +
             (bytes_ || got->size() != 8 ? "a value of " + std::to_string(got->size()) + " bytes"
                                         : "value " + hex(value_u64(*got))) +
             " that was never written";
    return first;
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

std::string checker::check_keys(const content_map& content) {
  for (auto& [k, v] : content)
    if (!key_index_.count(k)) return "recovered key " + show_key(k) + " was never inserted";
  // The operation each thread has in flight (at most one).
  std::vector<const op_rec*> flying(logs_.size(), nullptr);
  for (auto& log : logs_)
    for (auto& o : log) {
      if (!o.start) break;
      if (!o.end) flying[o.thread] = &o;
    }
  for (uint32_t ki = 0; ki < keys_.size(); ++ki) {
    auto it = content.find(keys_[ki]);
    const std::string* v = it == content.end() ? nullptr : &it->second;
    if (owner_[ki] == k_shared) {
      auto m = check_shared(ki, v);
      if (!m.empty()) return m;
      continue;
    }
    const op_rec* f = flying[owner_[ki]];
    if (f && f->ki == ki) {
      key_state before = f->prev, after = apply(*f, f->prev);
      key_state got = recovered(ki, v, {before, after});
      if (got != before && got != after)
        return "key " + show_key(ki) + " recovered " + show(got) + "; the " + to_string(f->kind) +
               " in flight allows only " + show(before) + " (not applied) or " + show(after) + " (applied)";
    } else {
      key_state got = recovered(ki, v, {ref_[ki]});
      if (got != ref_[ki])
        return "key " + show_key(ki) + " recovered " + show(got) + ", but the completed operations left " +
               show(ref_[ki]) + (ref_[ki].present && !got.present ? " (a completed operation was lost)" : "");
    }
  }
  return "";
}

// An unordered index (no scan): every key the history or the probes may
// have written, looked up, and stats().records for a record outside them.
std::string checker::read_by_lookups(index& idx, content_map& out) {
  out.clear();
  std::string got;
  for (auto* ks : {&keys_, &probes_})
    for (auto& k : *ks)
      if (call_lookup(idx, k, &got)) {
        if (!bytes_ && got.size() != 8) return "u64 lookup gave a value that is not 8 bytes";
        out.emplace(k, got);
      }
  const uint64_t n = idx.stats().records;
  if (n != out.size())
    return "stats() counts " + std::to_string(n) + " records, but lookups of every key written find " +
           std::to_string(out.size()) + (n > out.size() ? " (a key that was never inserted)" : "");
  return "";
}

// Reads the whole index with scan and checks it against lookups.
std::string checker::read_all(index& idx, content_map& out) {
  if (!ordered_) return read_by_lookups(idx, out);
  out.clear();
  record_buffer buf;
  std::string from;  // "" is the smallest key (u64: 0)
  for (size_t guard = 0; guard < 1000000; ++guard) {
    buf.clear();
    size_t n = call_scan(idx, from, 64, buf);
    if (n > 64 || n != buf.size()) return "scan returned more records than asked";
    for (size_t i = 0; i < n; ++i) {
      std::string_view k = buf.key(i);
      if (k < std::string_view(from) || (!out.empty() && k <= out.rbegin()->first))
        return "scan out of order at key " + show_key(k);
      if (!bytes_ && (k.size() != 8 || buf.value(i).size() != 8)) return "u64 scan gave a record that is not 8 bytes";
      out.emplace(std::string(k), std::string(buf.value(i)));
    }
    if (n < 64) break;
    from = out.rbegin()->first;
    if (bytes_) {
      from.push_back('\0');  // the smallest key after it
    } else {
      uint64_t k = key_u64(from);
      if (k == UINT64_MAX) break;
      from = std::string_view(key_bytes(k + 1));
    }
  }
  std::string got;
  for (auto& [k, v] : out) {
    if (!call_lookup(idx, k, &got)) return "lookup(" + show_key(k) + ") finds nothing, but scan gives it";
    if (got != v) return "lookup(" + show_key(k) + ") and scan give different values";
  }
  return "";
}

// After recovery the index must work: inserts that allocate (a block that
// recovery wrongly freed would be handed out twice), removes, updates.
std::string checker::check_usable(index& idx, content_map content) {
  std::string buf;
  for (unsigned i = 0; i < probes_.size(); ++i) {
    uint64_t id = 0xBEEF0000u + i;
    if (!call_insert(idx, probes_[i], id, buf)) return "after recovery: insert of a new key returned false";
    content[probes_[i]] = value_of(id);
  }
  unsigned n = 0;
  for (auto it = content.begin(); it != content.end(); ++n) {
    if (n % 2 == 0) {
      if (!call_remove(idx, it->first)) return "after recovery: remove(" + show_key(it->first) + ") returned false";
      it = content.erase(it);
    } else {
      uint64_t id = 0xBEEF1000u + n;
      if (!call_update(idx, it->first, id, buf))
        return "after recovery: update(" + show_key(it->first) + ") returned false";
      it->second = value_of(id);
      ++it;
    }
  }
  auto cr = idx.check();
  if (!cr.ok) return "after recovery and more operations, check() fails: " + cr.message;
  content_map now;
  auto m = read_all(idx, now);
  if (!m.empty()) return "after recovery and more operations: " + m;
  if (now != content) return "after recovery, inserts/removes/updates give the wrong content";
  return "";
}

std::string checker::oracle(char* image, bool frozen, uint64_t parent_used) {
  options o;
  o.index = c_.index;  // the parameters (keys=) come from the pool
  o.mode = c_.mode;
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
  content_map content;
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
  content_map again;
  m = read_all(*idx, again);
  if (!m.empty()) return "after a second recovery: " + m;
  if (again != content) return "a second recovery changed the records";
  return check_usable(*idx, content);
}

}  // namespace pmindex::crash

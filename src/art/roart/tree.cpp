// ROART: opening, volatile-field rebuild, lookups and scans (see roart.hpp).
#include <algorithm>
#include <bit>

#include "art/roart/roart.hpp"
#include "common/atomics.hpp"
#include "common/key_order.hpp"
#include "common/prefetch.hpp"
#include "common/root_block.hpp"
#include "pmindex/util/hash.hpp"

namespace pmindex::art::roart {

using common::load_acq;

namespace {
// The slots the leaf arrays this thread's scans visit use, about (a moving
// mean of their highest used slot + 1): how much of an array's head a scan
// asks for ahead. Sparse u64 keys fill arrays to ~16 records at 1M, to one
// or two at 10M, where asking for 3 lines per array filled the line-fill
// buffers with lines never read.
thread_local unsigned t_array_slots = 16;
}  // namespace

uint16_t fingerprint(std::string_view key) noexcept {
  // 8-byte chunks through memcpy and the tail through uint8_t: every byte is
  // read as unsigned, so a byte >= 0x80 hashes the same in every build.
  uint64_t h = key.size() * 0x9e3779b97f4a7c15ull;
  size_t i = 0;
  for (; i + 8 <= key.size(); i += 8) {
    uint64_t c;
    std::memcpy(&c, key.data() + i, 8);
    h = util::mix64(h ^ c);
  }
  if (i < key.size()) {
    uint64_t c = 0;
    for (size_t j = i; j < key.size(); ++j) c = c << 8 | uint8_t(key[j]);
    h = util::mix64(h ^ c ^ 0x5bd1e995);
  } else if (i == 0) {
    h = util::mix64(h + 1);
  }
  return uint16_t(h >> 48);
}

tree::tree(pm::pool& p, open_kind kind, const index_config& cfg) : bytes_index(p), p_(p), mut_(cfg) {
  if (p_.size() >= (uint64_t{1} << 48)) throw error(errc::unsupported, "roart: pools of 256 TiB or more");
  cap_ = unsigned(cfg.u64("leaf"));
  if (kind == open_kind::created) {
    root_ = common::create_root<root_block>(p_, k_magic, [](root_block& r) { r.gen = 1; });
    gen_ = 1;
    root_lock_ = uint64_t(gen_) << 32;
    return;
  }
  root_ = common::attach_root<root_block>(p_, k_magic, "roart");
  // Instant recovery: a new generation makes every node's lock word and
  // volatile fields stale; each node rebuilds them on first access. A dirty
  // open repairs nothing else (every commit is one 8-byte store); trace()
  // validates the words it follows.
  uint64_t g = root_->gen + 1;
  if (uint32_t(g) == 0) ++g;  // 0 is never a node's generation
  p_.store_persist(&root_->gen, g);
  gen_ = uint32_t(g);
  root_lock_ = uint64_t(gen_) << 32;
}

// ---------------------------------------------------------------- volatile fields

bool tree::bitmap_trusted() const { return mut_.on(mutant::stale_volatile); }

void tree::wait_held(unsigned& spins, const uint64_t* lock, uint64_t w) const {
  passes_.wait(spins, [&] { return load_acq(lock) == w; },
               "roart: a node's lock word is held by no writer (damaged pool)", p_.thread_slot());
}

void tree::fresh(uint64_t* lock, leaf_array* a, inner* n) {
  const uint64_t mine = uint64_t(gen_) << 32;
  const uint32_t slot = p_.thread_slot();
  for (unsigned spins = 0;;) {
    uint64_t w = load_acq(lock);
    if ((w >> 32) == gen_) {
      if (!(w & k_locked)) return;  // current (rebuilt by another thread meanwhile)
      wait_held(spins, lock, w);    // being rebuilt, or written
      continue;
    }
    // whatever a crash or a reopen left in it
    if (passes_.take(slot, [&]() noexcept { return common::cas(lock, w, mine | k_locked); })) break;
  }
  if (a && !bitmap_trusted()) {
    uint64_t bm = 0;
    for (unsigned i = 0; i < k_slots; ++i)
      if (load_acq(&a->slot[i])) bm |= uint64_t{1} << i;
    a->bitmap = bm;
  } else if (n && static_cast<kind>(n->kind) == kind::n48) {
    uint8_t* idx = n48_index(n);
    std::memset(idx, 0, 256);
    for (unsigned j = 0; j < 48; ++j)
      if (uint64_t c = load_acq(&n->child[j])) idx[byte_of(c)] = uint8_t(j + 1);
  }
  common::store_rel(lock, mine);
  passes_.leave(slot);
}

uint64_t tree::read_version(uint64_t* lock, leaf_array* a, inner* n) {
  for (unsigned spins = 0;;) {
    uint64_t w = load_acq(lock);
    if ((w >> 32) != gen_) [[unlikely]] {
      fresh(lock, a, n);
      continue;
    }
    if (!(w & k_locked)) [[likely]] return w;
    wait_held(spins, lock, w);
  }
}

uint64_t* tree::find_child(inner* n, unsigned b) {
  switch (static_cast<kind>(n->kind)) {
    case kind::n4:
    case kind::n16: {
      unsigned cap = capacity(static_cast<kind>(n->kind));
      for (unsigned j = 0; j < cap; ++j) {
        uint64_t c = load_acq(&n->child[j]);
        if (c && byte_of(c) == b) return &n->child[j];
      }
      return nullptr;
    }
    case kind::n48: {
      unsigned i = n48_index(n)[b];
      return i ? &n->child[i - 1] : nullptr;
    }
    default:
      return load_acq(&n->child[b]) ? &n->child[b] : nullptr;
  }
}

// ---------------------------------------------------------------- lookups

// Optimistic lock coupling without writes: each node's version is read
// before its fields and validated after them (a node replaced meanwhile is
// obsolete: restart); what a node names was read before its validation, so
// a validated child was its child at that moment. Blocks are freed through
// the epochs, so a node or leaf read here is never reused while pinned.
template <class Out>
bool tree::read(std::string_view key, Out&& out) {
  auto pin = p_.pin();
  const unsigned fp = fingerprint(key);
  const void* met = nullptr;  // the last node met obsolete
restart:
  uint64_t v = read_version(&root_lock_, nullptr, nullptr);
  uint64_t w = load_acq(&root_->root);
  if (!validate(&root_lock_, v)) goto restart;
  unsigned pos = 0;
  while (w) {
    if (is_array(w)) {
      leaf_array* a = array_at(w);
      // Its lines at once: the slots the bitmap names are then read
      // without a miss each.
      common::prefetch_lines(a, sizeof(leaf_array));
      v = read_version(&a->lock, a, nullptr);
      if (v & k_obsolete) {
        met_obsolete(met, a);
        goto restart;
      }
      bool found = false;
      for (uint64_t bm = __atomic_load_n(&a->bitmap, __ATOMIC_RELAXED); bm; bm &= bm - 1) {
        uint64_t s = load_acq(&a->slot[std::countr_zero(bm)]);
        if (s && fp_of(s) == fp && leaf_key(s) == key) {
          out(leaf_at(s));
          found = true;
          break;
        }
      }
      if (!validate(&a->lock, v)) goto restart;
      return found;
    }
    inner* n = inner_at(w);
    v = read_version(&n->lock, nullptr, n);
    if (v & k_obsolete) {
      met_obsolete(met, n);
      goto restart;
    }
    const unsigned lv = n->level;  // level and prefix never change
    if (key.size() < lv ||
        (lv > pos && std::memcmp(key.data() + pos, prefix_of(n) + (n->nprefix - (lv - pos)), lv - pos) != 0)) {
      if (!validate(&n->lock, v)) goto restart;
      return false;
    }
    if (key.size() == lv) {
      uint64_t e = load_acq(&n->eok);
      if (e) out(leaf_at(e));
      if (!validate(&n->lock, v)) goto restart;
      return e != 0;
    }
    uint64_t* c = find_child(n, uint8_t(key[lv]));
    w = c ? load_acq(c) : 0;
    if (!validate(&n->lock, v)) goto restart;
    pos = lv + 1;
  }
  return false;
}

bool tree::lookup(std::string_view key, std::string* value) {
  check_key(key);
  return read(key, [&](const common::kv_block* b) {
    if (value) value->assign(common::kv_value(b));
  });
}

std::optional<uint64_t> tree::lookup(uint64_t key) {
  auto kb = key_bytes(key);
  uint64_t v = 0;
  bool eight = true;
  auto copy = [&](const common::kv_block* b) {  // copied while pinned
    eight = b->vlen == 8;
    if (eight) v = value_u64(common::kv_value(b));
  };
  if (!read(kb, copy)) return std::nullopt;
  if (!eight) throw error(errc::unsupported, "roart: a u64 call met a value that is not 8 bytes");
  return v;
}

// ---------------------------------------------------------------- scans

// A sibling tells what a child word likely holds (a node's children were
// made alike): an array half the records of a sibling array (its bitmap,
// racily: a hint; no scan runs beside writers, but a stale array's bitmap
// is an older generation's), an inner node half the fewest records of its
// sibling's kind (a child holds at least one). No sibling: the fewest, an
// array's 1, an inner node's 2. Bytes: an array's head up to the slots
// this thread's arrays use, an inner node's first two lines.
tree::child_guess tree::guess_from(uint64_t model, uint64_t w) {
  const size_t head = 24 + 8 * size_t{t_array_slots};
  if (is_array(w)) {
    if (!model || !is_array(model)) return {1, head};
    leaf_array* m = array_at(model);
    if (!current(__atomic_load_n(&m->lock, __ATOMIC_RELAXED))) return {1, head};
    return {size_t(std::max(1, std::popcount(__atomic_load_n(&m->bitmap, __ATOMIC_RELAXED)) / 2)), head};
  }
  if (!model || is_array(model)) return {2, 128};
  switch (static_cast<kind>(__atomic_load_n(&inner_at(model)->kind, __ATOMIC_RELAXED))) {
    case kind::n4: return {1, 128};  // fewest children: 2, 5, 17, 49
    case kind::n16: return {2, 128};
    case kind::n48: return {8, 128};
    default: return {24, 128};
  }
}

// An array's leaves asked for, and the array into g as one entry.
void tree::ask_array(uint64_t w, walk_list& g) {
  leaf_array* a = array_at(w);
  fresh(a);
  const uint64_t bm = a->bitmap;
  if (!bm) return;
  for (uint64_t m = bm; m; m &= m - 1)
    if (uint64_t s = load_acq(&a->slot[std::countr_zero(m)])) __builtin_prefetch(leaf_at(s));
  g.e[g.n++] = off_of(w) | k_tag_array | k_entry_read;
  g.guessed += unsigned(std::popcount(bm));
}

void tree::list_node(inner* n, bool eok, unsigned lo, uint64_t model, walk_state& s, walk_list& g) {
  if (eok)
    if (uint64_t e = load_acq(&n->eok)) {  // the path itself: it sorts first
      __builtin_prefetch(leaf_at(e));
      g.e[g.n++] = off_of(e) | k_entry_read;
      ++g.guessed;
    }
  const child_guess arrays = guess_from(model, k_tag_array), inners = guess_from(model, k_tag_inner);
  auto put = [&](uint64_t c) {
    if (g.full()) return !(s.cut = true);
    const child_guess& cg = is_array(c) ? arrays : inners;
    common::prefetch_lines(p_.ptr<char>(off_of(c)), cg.bytes);
    g.e[g.n++] = c;
    g.guessed += cg.records;
    return true;
  };
  const kind nk = static_cast<kind>(n->kind);
  if (nk == kind::n4 || nk == kind::n16) {
    uint64_t kids[16];  // gathered and sorted
    unsigned m = 0;
    for (unsigned j = 0, cap = capacity(nk); j < cap; ++j)
      if (uint64_t c = load_acq(&n->child[j]); c && byte_of(c) >= lo) kids[m++] = c;
    std::sort(kids, kids + m, [](uint64_t a, uint64_t b) { return byte_of(a) < byte_of(b); });
    for (unsigned j = 0; j < m; ++j)
      if (!put(kids[j])) return;
    return;
  }
  const uint8_t* idx = nk == kind::n48 ? n48_index(n) : nullptr;
  for (unsigned b = lo; b < 256; ++b)
    if (uint64_t c = idx ? (idx[b] ? load_acq(&n->child[idx[b] - 1]) : 0) : load_acq(&n->child[b]))
      if (!put(c)) return;
}

// The path to s.from below node word w (found at key position pos, equal to
// from's first pos bytes): what hangs right of it into s.now, deepest
// first (it sorts first).
void tree::seed(uint64_t w, unsigned pos, walk_state& s) {
  if (is_array(w)) {
    s.edge = array_at(w);
    return ask_array(w, s.now);
  }
  inner* n = inner_at(w);
  fresh(n);
  const unsigned lv = n->level;
  const char* pre = prefix_of(n) + (n->nprefix - (lv - pos));
  const size_t avail = s.from.size() - pos, m = std::min<size_t>(avail, lv - pos);
  const int c = m ? std::memcmp(pre, s.from.data() + pos, m) : 0;
  if (c < 0) return;  // the whole subtree sorts before from
  // The whole subtree sorts at or after from (its end-of-key record too,
  // when from is exactly the path).
  if (c > 0 || avail <= lv - pos) return list_node(n, true, 0, 0, s, s.now);
  const unsigned b = uint8_t(s.from[lv]);
  uint64_t model = 0;
  if (uint64_t* cw = find_child(n, b))
    if (uint64_t ch = load_acq(cw)) {
      model = ch;  // its siblings are likely alike
      seed(ch, lv + 1, s);
    }
  if (b < 255) list_node(n, false, b + 1, model, s, s.now);
}

// One level: s.next is s.now from entry i on with every node word replaced
// by what it holds, up to its guessed fill.
void tree::expand(walk_state& s, size_t i) {
  const walk_list& f = s.now;
  walk_list& g = s.next;
  g.n = g.guessed = 0;
  for (; i < f.n; ++i) {
    if (g.full()) {
      s.cut = true;
      break;
    }
    const uint64_t e = f.e[i];
    if (e & k_entry_read) {
      g.e[g.n++] = e;
      g.guessed += is_array(e) ? unsigned(std::popcount(array_at(e)->bitmap)) : 1;
    } else if (is_array(e)) {
      ask_array(e, g);
    } else {
      inner* n = inner_at(e);
      fresh(n);
      list_node(n, true, 0, 0, s, g);
    }
  }
  std::swap(s.now, s.next);
}

template <class Sink>
bool tree::walk(std::string_view from, size_t want, Sink& sink, bool& cut) {
  thread_local std::vector<uint64_t> space;
  const size_t cap = want + 2;  // a list holds at most want + 1 entries (want may pass k_batch: walks())
  if (space.size() < 2 * cap) space.resize(2 * cap);
  walk_state s{from};
  s.now.e = space.data();
  s.next.e = space.data() + cap;
  s.now.want = want;
  size_t got = 0;
  auto counted = [&](const common::kv_block* b) {
    ++got;
    return sink(b);
  };
  if (uint64_t w = load_acq(&root_->root)) seed(w, 0, s);
  for (size_t i = 0;;) {
    for (; i < s.now.n; ++i) {
      const uint64_t e = s.now.e[i];
      if (!(e & k_entry_read)) break;  // a node word: expand from here
      if (is_array(e)) {
        leaf_array* a = array_at(e);
        if (!scan_array(a, from, a == s.edge, counted)) return false;
      } else if (!counted(common::kv_at(p_, off_of(e)))) {
        return false;
      }
    }
    if (i == s.now.n) break;
    s.next.want = want > got ? want - got : 1;
    expand(s, i);
    i = 0;
  }
  cut = s.cut;
  return true;
}

template <class Sink, class Next>
void tree::walks(std::string_view from, size_t want, Sink& sink, Next next_want) {
  std::string after;  // the key after the last one read: that key and a 0 byte
  const common::kv_block* last = nullptr;
  auto noted = [&](const common::kv_block* b) {
    last = b;
    return sink(b);
  };
  for (;;) {
    bool cut = false;
    const common::kv_block* before = last;
    if (!walk(from, want, noted, cut) || !cut) return;
    if (last == before) {  // nothing read: its guesses were too high, list more
      want *= 2;  // (until one walk lists to the end: then it is not cut)
      continue;
    }
    after.assign(common::kv_key(last));
    after.push_back('\0');
    from = after;
    want = next_want(want);
  }
}

// A leaf array's records in key order (its slots are in insertion order:
// ordered here, so a scan that stops inside the array returns the smallest).
// Its leaves were asked for a pass before (ask_array).
template <class Sink>
bool tree::scan_array(leaf_array* a, std::string_view from, bool bounded, Sink& sink) {
  const common::kv_block* blk[k_slots];
  unsigned m = 0;
  for (uint64_t bm = a->bitmap; bm; bm &= bm - 1)
    if (uint64_t s = load_acq(&a->slot[std::countr_zero(bm)])) blk[m++] = leaf_at(s);
  // Ordered without a comparison sort (std::sort of the array, its branches
  // unpredictable, was a third of a scan100 at 10K records): the keys of an
  // array share their first `level` bytes, so the byte at `level` spreads
  // them over 256 buckets, taken in order from a bitmap; the few records
  // that share a bucket are kept in key order as they go in. A key no longer
  // than `level` (a sound tree has none) goes first, in bucket 0.
  constexpr uint8_t k_none = 0xff;
  const unsigned lv = a->level;
  // (No array here has a constructor: at 10M records most arrays hold one or
  // two records, and a version that cleared a 64-entry array of
  // string_views on every array visit made a 10M scan100 0.68x.)
  const common::kv_block* got[k_slots];
  uint8_t first[257], next[k_slots];  // bucket -> its first record, record -> the next one
  uint64_t used[5] = {};
  unsigned k = 0;
  for (unsigned i = 0; i < m; ++i) {
    std::string_view kk = common::kv_key(blk[i]);
    if (bounded && common::key_less(kk, from)) continue;
    const unsigned j = k++, b = kk.size() > lv ? uint8_t(kk[lv]) + 1u : 0u;
    got[j] = blk[i];
    uint8_t* at = &first[b];
    if (!(used[b >> 6] >> (b & 63) & 1)) {
      used[b >> 6] |= uint64_t{1} << (b & 63);
      *at = k_none;
    }
    while (*at != k_none && common::key_less(common::kv_key(got[*at]), kk)) at = &next[*at];
    next[j] = *at;
    *at = uint8_t(j);
  }
  if (const uint64_t bm = a->bitmap) t_array_slots = (3 * t_array_slots + 64 - unsigned(std::countl_zero(bm))) / 4;
  for (unsigned w = 0; w < 5; ++w)
    for (uint64_t bits = used[w]; bits; bits &= bits - 1)
      for (unsigned j = first[w * 64 + unsigned(std::countr_zero(bits))]; j != k_none; j = next[j])
        if (!sink(got[j])) return false;
  return true;
}

size_t tree::scan(std::string_view from, size_t count, record_buffer& out) {
  if (!count) return 0;  // any bound is valid: no check_key
  size_t n = 0;
  auto sink = [&](const common::kv_block* b) {
    out.push_back(common::kv_key(b), common::kv_value(b));
    return ++n < count;
  };
  common::writer_gate::shared_closed no_writers(gate_);  // no writer meanwhile: an atomic snapshot
  walks(from, std::min(count, k_batch), sink, [&](size_t) { return std::min(count - n, k_batch); });
  return n;
}

size_t tree::range(std::string_view lo, std::string_view hi, record_buffer& out) {
  size_t n = 0;
  auto sink = [&](const common::kv_block* b) {
    if (common::kv_key(b) > hi) return false;
    out.push_back(common::kv_key(b), common::kv_value(b));
    ++n;
    return true;
  };
  if (lo > hi) return 0;
  common::writer_gate::shared_closed no_writers(gate_);  // no writer meanwhile: an atomic snapshot
  // A walk lists before it reads, so it cannot stop at hi: the first lists
  // 16 records, each next one twice as many while the range goes on.
  walks(lo, 16, sink, [](size_t w) { return std::min(2 * w, k_batch); });
  return n;
}

size_t tree::scan(uint64_t from, size_t count, record* out) {
  if (!count) return 0;
  auto kb = key_bytes(from);
  size_t n = 0;
  auto sink = [&](const common::kv_block* b) {
    if (b->klen != 8 || b->vlen != 8)
      throw error(errc::unsupported, "roart: a u64 call met a record that is not 8 + 8 bytes");
    out[n] = {key_u64(common::kv_key(b)), value_u64(common::kv_value(b))};
    return ++n < count;
  };
  common::writer_gate::shared_closed no_writers(gate_);  // no writer meanwhile: an atomic snapshot
  walks(kb, std::min(count, k_batch), sink, [&](size_t) { return std::min(count - n, k_batch); });
  return n;
}

}  // namespace pmindex::art::roart

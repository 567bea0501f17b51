// ROART: opening, volatile-field rebuild, lookups and scans (see roart.hpp).
#include <algorithm>
#include <bit>

#include "art/roart/roart.hpp"
#include "common/atomics.hpp"
#include "common/prefetch.hpp"
#include "common/root_block.hpp"
#include "pmindex/sync/optimistic_lock.hpp"
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

void tree::fresh(uint64_t* lock, leaf_array* a, inner* n) {
  const uint64_t mine = uint64_t(gen_) << 32;
  for (unsigned spins = 0;; ++spins) {
    uint64_t w = load_acq(lock);
    if ((w >> 32) == gen_) {
      if (!(w & k_locked)) return;  // current (rebuilt by another thread meanwhile)
      sync::optimistic_lock::backoff(spins);  // being rebuilt, or written
      continue;
    }
    if (common::cas(lock, w, mine | k_locked)) break;  // whatever a crash or a reopen left in it
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
}

uint64_t tree::read_version(uint64_t* lock, leaf_array* a, inner* n) {
  for (unsigned spins = 0;; ++spins) {
    uint64_t w = load_acq(lock);
    if ((w >> 32) != gen_) [[unlikely]] {
      fresh(lock, a, n);
      continue;
    }
    if (!(w & k_locked)) [[likely]] return w;
    sync::optimistic_lock::backoff(spins);
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
restart:
  uint64_t v = read_version(&root_lock_, nullptr, nullptr);
  uint64_t w = load_acq(&root_->root);
  if (!validate(&root_lock_, v)) goto restart;
  unsigned pos = 0;
  while (w) {
    if (is_array(w)) {
      leaf_array* a = array_at(w);
      v = read_version(&a->lock, a, nullptr);
      if (v & k_obsolete) goto restart;
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
    if (v & k_obsolete) goto restart;
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

// In-order walk of the subtree of node word w, found at key position pos.
// `bounded`: the path to w equals from's first pos bytes, so records below
// from are skipped. sink(leaf) -> false stops the walk (returns false).
// `left`: records the caller will likely still take (sizes the asking
// ahead; SIZE_MAX: unknown); `asked`: w is a leaf array whose leaves a
// walk above already asked for.
template <class Sink>
bool tree::scan_node(uint64_t w, unsigned pos, std::string_view from, bool bounded, Sink& sink, size_t& left,
                     bool asked) {
  if (is_array(w)) return scan_array(array_at(w), from, bounded, sink, left, asked);
  inner* n = inner_at(w);
  fresh(n);
  const unsigned lv = n->level;
  if (bounded) {
    const char* pre = prefix_of(n) + (n->nprefix - (lv - pos));
    size_t avail = from.size() - pos, m = std::min<size_t>(avail, lv - pos);
    int c = m ? std::memcmp(pre, from.data() + pos, m) : 0;
    if (c < 0) return true;            // the whole subtree sorts before from
    if (c > 0 || avail < lv - pos) bounded = false;  // ... after from
  }
  // The end-of-key record is the path itself: it sorts first.
  if (uint64_t e = load_acq(&n->eok); e && (!bounded || from.size() == lv))
    if (!sink(leaf_at(e))) return false;
  unsigned lo = 0;
  bool edge = false;  // the child at lo is still bounded
  if (bounded && from.size() > lv) {
    lo = uint8_t(from[lv]);
    edge = true;
  }
  // The children from byte lo, in key order, one at a time.
  const kind nk = static_cast<kind>(n->kind);
  uint64_t kids[16];  // N4/N16: gathered and sorted
  unsigned nkids = 0, at = 0;
  if (nk == kind::n4 || nk == kind::n16) {
    for (unsigned j = 0, cap = capacity(nk); j < cap; ++j)
      if (uint64_t c = load_acq(&n->child[j]); c && byte_of(c) >= lo) kids[nkids++] = c;
    std::sort(kids, kids + nkids, [](uint64_t a, uint64_t b) { return byte_of(a) < byte_of(b); });
  }
  const uint8_t* idx = nk == kind::n48 ? n48_index(n) : nullptr;
  unsigned b = lo;  // N48/N256: the next byte to look at
  auto next = [&](kid& k) {
    if (nk == kind::n4 || nk == kind::n16) {
      if (at == nkids) return false;
      k = {kids[at], byte_of(kids[at])};
      ++at;
      return true;
    }
    for (; b < 256; ++b) {
      const uint64_t c = idx ? (idx[b] ? load_acq(&n->child[idx[b] - 1]) : 0) : load_acq(&n->child[b]);
      if (c) {
        k = {c, b++};
        return true;
      }
    }
    return false;
  };
  // Each child is a dependent miss (a leaf array: its head, then its
  // leaves, each a block of its own). At 1M records a scan100 crosses ~6
  // arrays of ~16 records, at 10M ~70 of one or two: visited one after
  // another, a third of the scan waited on an array's first line and a
  // third on its first leaf (perf). So while q[0] is walked, the children
  // after it are asked for (ask_ahead): the heads first, their leaves
  // one visit later, while the records before them will likely not end
  // the scan.
  kid q[k_kids_ahead];
  unsigned qn = 0;
  while (qn < k_kids_ahead && next(q[qn])) ++qn;
  while (qn) {
    ask_ahead(q, qn, left);
    if (!scan_node(q[0].w, lv + 1, from, edge && q[0].byte == lo, sink, left, q[0].state == kid::k_leaves))
      return false;
    std::copy(q + 1, q + qn, q);
    if (!next(q[qn - 1])) --qn;
  }
  return true;
}

// Asks for what the walk of q[0] will be followed by (scan_node): the
// leaves of the children whose heads were asked for before, while fewer
// than k_records_ahead records lie between q[0] and them, and the heads
// of the next k_heads_ahead children after those; nothing past where the
// records before (a known array's count; an unread array counts none, a
// subtree all) reach `left`. More at once only queues behind full
// line-fill buffers. Hints read without validation: a scan excludes
// writers, and a stale array's bitmap (an older generation's) is not used.
void tree::ask_ahead(kid* q, unsigned qn, size_t left) {
  auto records = [](const kid& k) {
    if (!is_array(k.w)) return left_unknown;
    return k.state == kid::k_leaves ? size_t(k.pop) : size_t{0};
  };
  size_t before = records(q[0]);  // records from q[0] up to q[i]
  unsigned heads = 0;
  for (unsigned i = 1; i < qn && before < left; ++i) {
    kid& k = q[i];
    if (k.state == kid::k_none) {
      if (heads++ == k_heads_ahead) break;
      const char* h = p_.ptr<char>(off_of(k.w));
      common::prefetch_lines(h, is_array(k.w) ? 24 + 8 * t_array_slots : 64);
      k.state = kid::k_head;
    } else if (k.state == kid::k_head && is_array(k.w) && before - records(q[0]) < k_records_ahead) {
      leaf_array* a = array_at(k.w);
      if (current(load_acq(&a->lock))) {
        const uint64_t bm = load_acq(&a->bitmap);
        for (uint64_t m = bm; m; m &= m - 1)
          if (uint64_t s = load_acq(&a->slot[std::countr_zero(m)])) __builtin_prefetch(leaf_at(s));
        k.pop = unsigned(std::popcount(bm));
        k.state = kid::k_leaves;
      }
    } else if (k.state == kid::k_head) {
      ++heads;
    }
    const size_t r = records(k);
    before = r == left_unknown ? left_unknown : before + r;
  }
}

// A leaf array's records in key order (its slots are in insertion order:
// ordered here, so a scan that stops inside the array returns the smallest).
template <class Sink>
bool tree::scan_array(leaf_array* a, std::string_view from, bool bounded, Sink& sink, size_t& left, bool asked) {
  fresh(a);
  // Every leaf is a block of its own: prefetch them all before reading any,
  // so their misses overlap (unless the walk above asked for them already:
  // a second ask of a line in flight still takes a load-queue slot).
  const common::kv_block* blk[k_slots];
  unsigned m = 0;
  for (uint64_t bm = a->bitmap; bm; bm &= bm - 1)
    if (uint64_t s = load_acq(&a->slot[std::countr_zero(bm)])) {
      blk[m] = leaf_at(s);
      if (!asked) __builtin_prefetch(blk[m]);
      ++m;
    }
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
    if (bounded && kk < from) continue;
    const unsigned j = k++, b = kk.size() > lv ? uint8_t(kk[lv]) + 1u : 0u;
    got[j] = blk[i];
    uint8_t* at = &first[b];
    if (!(used[b >> 6] >> (b & 63) & 1)) {
      used[b >> 6] |= uint64_t{1} << (b & 63);
      *at = k_none;
    }
    while (*at != k_none && common::kv_key(got[*at]) < kk) at = &next[*at];
    next[j] = *at;
    *at = uint8_t(j);
  }
  left -= std::min<size_t>(left, k);
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
  size_t left = count;
  if (uint64_t w = load_acq(&root_->root)) scan_node(w, 0, from, true, sink, left, false);
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
  common::writer_gate::shared_closed no_writers(gate_);  // no writer meanwhile: an atomic snapshot
  size_t left = left_unknown;
  if (uint64_t w = load_acq(&root_->root); w && lo <= hi) scan_node(w, 0, lo, true, sink, left, false);
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
  size_t left = count;
  if (uint64_t w = load_acq(&root_->root)) scan_node(w, 0, kb, true, sink, left, false);
  return n;
}

}  // namespace pmindex::art::roart

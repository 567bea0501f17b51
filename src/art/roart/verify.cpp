// ROART: check(), trace() and stats() (see roart.hpp). trace() is also the
// validation of a dirty open: every word is checked before it is followed
// (node tags, kinds, sizes inside the heap; leaves with kv_block_valid), and
// a bad one is errc::corrupt. Leaf arrays are traced from their slot words,
// never from the volatile bitmap.
#include <bit>

#include "art/roart/roart.hpp"
#include "common/atomics.hpp"

namespace pmindex::art::roart {

using common::load_acq;

namespace {

// The words of one node point anywhere in the pool: asking for all their
// targets before following the first overlaps the misses (a quiescent walk
// of 10M records otherwise waits on one miss at a time: seconds). Out of
// line: the recursive walks keep small frames (Roart.LongestPrefixChain).
[[gnu::noinline]] void prefetch_targets(const pm::pool& p, const uint64_t* words, unsigned n) {
  for (unsigned i = 0; i < n; ++i)
    if (uint64_t w = words[i]) __builtin_prefetch(p.ptr<char>(off_of(w)));
}

}  // namespace

// ---------------------------------------------------------------- trace

void tree::trace(pm::pool::trace_sink& sink) {
  common::writer_gate::closed no_writers(gate_);
  sink.add(p_.off(root_), sizeof(root_block));
  if (uint64_t w = load_acq(&root_->root)) trace_node(sink, w, 0);
}

void tree::trace_node(pm::pool::trace_sink& sink, uint64_t w, unsigned pos) {
  auto leaf = [&](uint64_t s) {
    if (!leaf_ok(s)) corrupt("a leaf word names no valid leaf");
    sink.add(off_of(s), common::kv_block_size(p_, off_of(s)));
  };
  if (is_array(w) == is_inner(w) || (w & 9)) corrupt("a node word with a bad tag");
  if (is_array(w)) {
    if (!p_.valid_block(off_of(w), sizeof(leaf_array))) corrupt("a leaf array outside the heap");
    leaf_array* a = array_at(w);
    sink.add(off_of(w), sizeof(leaf_array));
    prefetch_targets(p_, a->slot, k_slots);
    for (unsigned i = 0; i < k_slots; ++i)
      if (uint64_t s = load_acq(&a->slot[i])) leaf(s);
    return;
  }
  if (!p_.valid_block(off_of(w), k_inner_header)) corrupt("an inner node outside the heap");
  inner* n = inner_at(w);
  if (n->kind < uint8_t(kind::n4) || n->kind > uint8_t(kind::n256)) corrupt("an inner node of no kind");
  auto k = static_cast<kind>(n->kind);
  if (n->level < pos || n->nprefix < n->level - pos || n->level > k_max_key)
    corrupt("an inner node whose level disagrees with its position");
  if (!p_.valid_block(off_of(w), inner_size(k, n->nprefix))) corrupt("an inner node outside the heap");
  sink.add(off_of(w), inner_size(k, n->nprefix));
  if (uint64_t e = load_acq(&n->eok)) leaf(e);
  prefetch_targets(p_, n->child, capacity(k));
  for (unsigned j = 0; j < capacity(k); ++j)
    if (uint64_t c = load_acq(&n->child[j])) trace_node(sink, c, n->level + 1);
}

// ---------------------------------------------------------------- check

check_result tree::check() {
  common::writer_gate::closed no_writers(gate_);
  uint64_t w = load_acq(&root_->root);
  if (root_->magic != k_magic) return check_result::fail("roart: bad root magic");
  if (!w) return {};
  std::string path;
  uint64_t n = 0;
  std::string e = check_node(w, 0, path, n);
  if (!e.empty()) return check_result::fail("roart: " + e);
  return {};
}

// Node w at key position pos, reached by `path` (its first pos bytes):
// every level at or past its position and its stored prefix covering the gap,
// every record's key extending the path (an end-of-key record equal to it),
// fingerprints right, the volatile fields equal to what a rebuild gives,
// child bytes distinct and where their kind puts them. One frame per level
// (4096 levels for the longest keys): the checks of one node are out of line
// (check_array, check_inner), so the recursion keeps only what it needs (an
// ASan frame of 2 KB overflowed a thread's 8 MB stack; Roart.LongestPrefixChain).
std::string tree::check_node(uint64_t w, unsigned pos, std::string& path, uint64_t& n) {
  // A clean open trusts the pool, so check() is what meets a damaged one:
  // every word is validated (as trace_node does) before it is followed.
  if (is_array(w) == is_inner(w) || (w & 9)) return "a node word with a bad tag";
  if (is_array(w)) return check_array(w, pos, path, n);
  const size_t keep = path.size();
  inner* nd = nullptr;
  if (std::string e = check_inner(w, pos, path, n, nd); !e.empty()) return e;
  const auto k = static_cast<kind>(nd->kind);
  const unsigned lv = nd->level;
  uint64_t seen[4] = {};  // the child bytes met
  prefetch_targets(p_, nd->child, capacity(k));
  for (unsigned j = 0; j < capacity(k); ++j) {
    uint64_t c = nd->child[j];
    if (!c) continue;
    unsigned b = byte_of(c);
    if (seen[b >> 6] >> (b & 63) & 1) return "a byte twice in one inner node";
    seen[b >> 6] |= uint64_t{1} << (b & 63);
    if (k == kind::n256 && b != j) return "an N256 child off its byte";
    if (k == kind::n48 && n48_index(nd)[b] != j + 1) return "an N48 index disagrees with its children";
    path.push_back(char(b));
    std::string e = check_node(c, lv + 1, path, n);
    path.pop_back();
    if (!e.empty()) return e;
  }
  if (k == kind::n48)
    for (unsigned b = 0; b < 256; ++b)
      if (n48_index(nd)[b] && !(seen[b >> 6] >> (b & 63) & 1)) return "an N48 index names a missing child";
  path.resize(keep);
  return "";
}

bool tree::leaf_ok(uint64_t s) const { return common::kv_block_valid(p_, off_of(s), k_max_key, k_max_value); }

std::string tree::check_array(uint64_t w, unsigned pos, const std::string& path, uint64_t& n) {
  if (!p_.valid_block(off_of(w), sizeof(leaf_array))) return "a leaf array outside the heap";
  leaf_array* a = array_at(w);
  fresh(a);  // (errc::corrupt for a word held by no writer)
  if (a->lock & k_obsolete) return "an obsolete leaf array in the tree";  // (no writer runs)
  if (a->level != pos) return "a leaf array's level disagrees with its position";
  uint64_t used = 0;
  prefetch_targets(p_, a->slot, k_slots);
  for (unsigned i = 0; i < k_slots; ++i) {
    uint64_t s = a->slot[i];
    if (!s) continue;
    used |= uint64_t{1} << i;
    if (!leaf_ok(s)) return "a leaf word names no valid leaf";
    if (keys() == key_kind::u64 && (leaf_at(s)->klen != 8 || leaf_at(s)->vlen != 8))
      return "a record of a keys=u64 pool that is not 8 + 8 bytes";
    std::string_view k = leaf_key(s);
    if (k.size() < pos || k.substr(0, pos) != path) return "a record in a leaf array off its path";
    if (fp_of(s) != fingerprint(k)) return "a slot's fingerprint disagrees with its key";
    for (unsigned j = 0; j < i; ++j)
      if (a->slot[j] && leaf_key(a->slot[j]) == k) return "a key twice in one leaf array";
    ++n;
  }
  if (!bitmap_trusted() && a->bitmap != used) return "a leaf array's bitmap disagrees with its slots";
  if (unsigned(std::popcount(used)) > cap_) return "a leaf array over its capacity";
  return "";
}

// An inner node's own fields and end-of-key record; appends its prefix to
// path and sets nd.
std::string tree::check_inner(uint64_t w, unsigned pos, std::string& path, uint64_t& n, inner*& nd) {
  if (!p_.valid_block(off_of(w), k_inner_header)) return "an inner node outside the heap";
  nd = inner_at(w);
  if (nd->kind < uint8_t(kind::n4) || nd->kind > uint8_t(kind::n256)) return "an inner node of no kind";
  auto k = static_cast<kind>(nd->kind);
  const unsigned lv = nd->level;
  if (lv < pos || nd->nprefix < lv - pos || lv > k_max_key) return "an inner node's level disagrees with its position";
  if (!p_.valid_block(off_of(w), inner_size(k, nd->nprefix))) return "an inner node outside the heap";
  fresh(nd);
  if (nd->lock & k_obsolete) return "an obsolete inner node in the tree";
  path.append(prefix_of(nd) + (nd->nprefix - (lv - pos)), lv - pos);
  if (uint64_t e = nd->eok) {
    if (!leaf_ok(e)) return "a leaf word names no valid leaf";
    if (keys() == key_kind::u64) return "an end-of-key record in a keys=u64 pool";
    if (leaf_key(e) != path) return "an end-of-key record that is not its node's path";
    ++n;
  }
  return "";
}

// ---------------------------------------------------------------- stats

void tree::count_node(uint64_t w, unsigned depth, census& c) {
  if (is_array(w)) {
    leaf_array* a = array_at(w);
    ++c.arrays;
    for (unsigned i = 0; i < k_slots; ++i)
      if (a->slot[i]) {
        ++c.records;
        ++c.used_slots;
        c.depth_sum += depth;
      }
    return;
  }
  inner* n = inner_at(w);
  ++c.inner[n->kind];
  if (n->eok) {
    ++c.records;
    c.depth_sum += depth;
  }
  prefetch_targets(p_, n->child, capacity(static_cast<kind>(n->kind)));
  for (unsigned j = 0; j < capacity(static_cast<kind>(n->kind)); ++j)
    if (uint64_t x = n->child[j]) count_node(x, depth + 1, c);
}

index_stats tree::stats() {
  common::writer_gate::closed no_writers(gate_);
  census c;
  if (uint64_t w = load_acq(&root_->root)) count_node(w, 1, c);
  index_stats s;
  s.records = c.records;
  auto u = p_.usage();
  s.pm_bytes_used = u.used_bytes;
  s.pm_bytes_reserved = u.reserved_bytes;
  s.dram_bytes = u.dram_bytes + sizeof(*this) + common::writer_gate::dram_bytes();
  s.alloc_dram_bytes = u.dram_bytes;
  s.extra.push_back({"leaf_arrays", double(c.arrays)});
  s.extra.push_back({"leaf_array_fill", c.arrays ? double(c.used_slots) / double(c.arrays * k_slots) : 0.0});
  s.extra.push_back({"depth_avg", c.records ? double(c.depth_sum) / double(c.records) : 0.0});
  s.extra.push_back({"inner_nodes", double(c.inner[1] + c.inner[2] + c.inner[3] + c.inner[4])});
  s.extra.push_back({"node4", double(c.inner[1])});
  s.extra.push_back({"node16", double(c.inner[2])});
  s.extra.push_back({"node48", double(c.inner[3])});
  s.extra.push_back({"node256", double(c.inner[4])});
  return s;
}

}  // namespace pmindex::art::roart

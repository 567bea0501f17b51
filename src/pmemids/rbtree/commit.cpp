// pmemids `rbtree`: writing an operation's working set back (tx: in place
// under the undo log; persist: copies of the changed region and one 8-byte
// store), and check, trace, stats.
#include <algorithm>
#include <cstring>

#include "pmemids/rbtree/rbtree.hpp"
#include "pmemids/rbtree/work.hpp"

namespace pmindex::pmemids::rbtree {

void tree::commit(work& w) {
  if (!w.tx) return commit_cow(w);
  pm::transaction& tx = *w.tx;
  for (auto& e : w.e) {
    if (e.dead) {
      tx.free(e.off);
      continue;
    }
    if (!e.dirty) continue;
    uint64_t* h = hdr(e.off);
    if (!e.fresh && !mut_.on(mutant::tx_unlogged_color)) tx.snapshot(h, 24);
    h[0] = e.left, h[1] = e.right, h[2] = e.red;
    if (e.rec != e.off) {  // the successor's record (freed at commit, intact until then)
      tx.snapshot(h + 3, std::max(rec_bytes(e.off), rec_bytes(e.rec)));
      std::memcpy(h + 3, hdr(e.rec) + 3, rec_bytes(e.rec));
    }
  }
  if (w.root != w.root0) tx.set(&root_->tree, w.root);
}

// Copy-on-write: the changed nodes (C) are written as copies; a node whose
// child is copied has that child word changed, so C grows upwards until the
// words to change are a single word (one node's child, or the root word):
// the commit.
void tree::commit_cow(work& w) {
  auto& e = w.e;
  const size_t n = e.size();
  std::vector<int> parent(n, -1);
  for (size_t i = 0; i < n; ++i) {
    if (e[i].dead) continue;
    for (uint64_t c : {e[i].left, e[i].right})
      if (size_t j = c ? w.find(c) : SIZE_MAX; j != SIZE_MAX && !e[j].dead) parent[j] = static_cast<int>(i);
  }
  std::vector<char> copy(n);
  for (size_t i = 0; i < n; ++i) copy[i] = e[i].dirty && !e[i].dead;
  int target;  // -1: the root word
  for (;;) {
    bool grew = false, root_word = w.root != w.root0;
    std::vector<int> targets;
    for (size_t i = 0; i < n; ++i) {
      if (!copy[i]) continue;
      const int p = parent[i];
      if (p < 0) {
        root_word = true;
      } else if (!copy[p]) {
        // Two copied children: their parent is copied too.
        if (std::find(targets.begin(), targets.end(), p) != targets.end())
          copy[p] = 1, grew = true;
        else
          targets.push_back(p);
      }
    }
    if (grew) continue;
    if (targets.size() + root_word <= 1) {
      target = root_word || targets.empty() ? -1 : targets[0];
      break;
    }
    for (int t : targets) copy[t] = 1;
  }
  // Fresh blocks: a remove may take them from the reserve (it frees more
  // than it allocates); an insert may not.
  std::vector<uint64_t> to(n, 0);
  auto release = [&] {
    for (size_t i = 0; i < n; ++i)
      if (to[i] && (!e[i].fresh)) p_.free(to[i]);
  };
  // A throw here (pool_full, or std::bad_alloc from the heap) frees the
  // copies; the operation's fresh node is its caller's (insert).
  try {
    for (size_t i = 0; i < n; ++i) {
      if (!copy[i]) continue;
      if (e[i].fresh) {
        to[i] = e[i].off;
        continue;
      }
      uint64_t o;
      while (!(o = w.removing ? p_.alloc_for_remove(node_bytes_) : p_.alloc(node_bytes_)))
        if (!w.removing || !p_.wait_for_reserve())
          throw error(errc::pool_full, "pool " + p_.path() + " is full: rbtree found no block");
      to[i] = o;
    }
  } catch (...) {
    release();
    throw;
  }
  auto remap = [&](uint64_t off) {
    const size_t j = off ? w.find(off) : SIZE_MAX;
    return j != SIZE_MAX && copy[j] ? to[j] : off;
  };
  for (size_t i = 0; i < n; ++i) {
    if (!copy[i]) continue;
    uint64_t* h = hdr(to[i]);
    if (!e[i].fresh || e[i].rec != e[i].off) std::memcpy(h + 3, hdr(e[i].rec) + 3, rec_bytes(e[i].rec));
    h[0] = remap(e[i].left), h[1] = remap(e[i].right), h[2] = e[i].red;
  }
  uint64_t* word = &root_->tree;
  uint64_t value = remap(w.root);
  if (target >= 0) {  // the clean node with one copied child
    const auto& t = e[static_cast<size_t>(target)];
    const int side = remap(t.left) != t.left ? 0 : 1;
    word = &hdr(t.off)[side];
    value = remap(side == 0 ? t.left : t.right);
  }
  const bool early = mut_.on(mutant::commit_before_flush);
  if (early) p_.store_persist(word, value);
  for (size_t i = 0; i < n; ++i)
    if (copy[i]) p_.flush(hdr(to[i]), 24 + rec_bytes(to[i]));
  p_.fence();
  if (!early) p_.store_persist(word, value);  // the commit
  for (size_t i = 0; i < n; ++i)
    if ((copy[i] && !e[i].fresh) || e[i].dead) p_.free(e[i].off);
}

// --- check, trace, stats

std::string tree::check_node(uint64_t x, int depth, bool red_parent, const key* lo, const key* hi, int& black,
                             uint64_t& n) {
  black = 0;
  if (!x) return "";
  if (depth > k_max_depth) return "deeper than " + std::to_string(k_max_depth) + " levels";
  if (!p_.valid_block(x, node_bytes_)) return "node offset " + std::to_string(x) + " outside the heap";
  const uint64_t* h = hdr(x);
  const key k = key_at(x);
  const uint64_t m = meta_at(x);
  if (h[2] > 1) return "node colour " + std::to_string(h[2]);
  if (!meta_live(m) || k.len > k_max_key || (u64_ && k.len != 8) || meta_vlen(m) > max_value_ ||
      (u64_ && meta_vlen(m) != 8))
    return "record with key length " + std::to_string(k.len) + ", value length " + std::to_string(meta_vlen(m));
  if (!u64_ && !key_canonical(k)) return "key with bytes past its length";
  if ((lo && !(*lo < k)) || (hi && !(k < *hi))) return "keys out of order";
  if (h[2] && red_parent) return "a red node with a red child";
  int bl, br;
  if (auto why = check_node(h[0], depth + 1, h[2], lo, &k, bl, n); !why.empty()) return why;
  if (auto why = check_node(h[1], depth + 1, h[2], &k, hi, br, n); !why.empty()) return why;
  if (bl != br) return "black heights " + std::to_string(bl) + " and " + std::to_string(br);
  black = bl + (h[2] ? 0 : 1);
  ++n;
  return "";
}

check_result tree::check() {
  int black;
  uint64_t n = 0;
  auto why = check_node(root_->tree, 0, false, nullptr, nullptr, black, n);
  if (why.empty() && root_->tree && hdr(root_->tree)[2]) why = "a red root";
  return why.empty() ? check_result{} : check_result::fail("rbtree: " + why);
}

void tree::trace(pm::pool::trace_sink& s) {
  s.add(p_.root(), sizeof(root_block));
  // Bounded and checked: a damaged pool is an error, never a wild walk.
  std::vector<std::pair<uint64_t, int>> todo;
  if (root_->tree) todo.push_back({root_->tree, 0});
  while (!todo.empty()) {
    auto [x, depth] = todo.back();
    todo.pop_back();
    if (!p_.valid_block(x, node_bytes_) || depth > k_max_depth)
      throw error(errc::corrupt, "rbtree: a damaged node during recovery");
    s.add(x, node_bytes_);
    for (int c = 0; c < 2; ++c)
      if (hdr(x)[c]) todo.push_back({hdr(x)[c], depth + 1});
  }
}

index_stats tree::stats() {
  index_stats st;
  uint64_t depth = 0;
  std::vector<std::pair<uint64_t, uint64_t>> todo;
  if (root_->tree) todo.push_back({root_->tree, 1});
  while (!todo.empty()) {
    auto [x, d] = todo.back();
    todo.pop_back();
    ++st.records;
    depth = std::max(depth, d);
    for (int c = 0; c < 2; ++c)
      if (hdr(x)[c]) todo.push_back({hdr(x)[c], d + 1});
  }
  add_pool_usage(st, p_);
  st.extra = {{"depth", double(depth)}, {"node_bytes", double(node_bytes_)}};
  return st;
}

}  // namespace pmindex::pmemids::rbtree

// The skip-list mechanics both canary layouts share (canary.cpp: keys=u64,
// bytes.cpp: keys=bytes), over a node type with `height` and `next[]`
// (node.hpp). Keys stay with the layout: searches take `before(off)`, true
// while the node at `off` sorts before the key sought.
#pragma once

#include <atomic>
#include <cstdint>
#include <mutex>
#include <optional>
#include <string>

#include "basic/canary/node.hpp"
#include "common/atomics.hpp"
#include "common/marker_passes.hpp"
#include "pmindex/error.hpp"
#include "pmindex/index.hpp"

namespace pmindex::basic::canary::detail {

// stats() of a canary: `records`, and the pool's figures.
inline index_stats list_stats(pm::pool& p, int64_t records, size_t self_bytes) {
  index_stats s;
  s.records = static_cast<uint64_t>(records);
  auto u = p.usage();
  s.pm_bytes_used = u.used_bytes;
  s.pm_bytes_reserved = u.reserved_bytes;
  s.dram_bytes = u.dram_bytes + self_bytes;
  s.alloc_dram_bytes = u.dram_bytes;
  return s;
}

// The writers' mutex, which also tells a waiting reader whether a writer is
// inside. Readers wait while a writer's COMMIT MARKER is set (a level-0
// link's or a kv word's UNPERSISTED tag, a value's odd seqlock); a writer
// sets and clears each within one section. A damaged pool may hold a
// marker no writer will clear (a dirty open clears them, a clean one
// trusts them): readers waited forever (`damagetest --index canary`:
// verify and lookups hung at its deadline). So the writer holds the mutex
// inside a common::marker_passes section, and a long wait with no writer
// inside while the marker was read is damage (errc::corrupt); so is a
// marker met by the writer itself, which clears its own before it reads.
class writer_mutex {
 public:
  explicit writer_mutex(pm::pool& p) : p_(p) {}
  void lock() {
    mu_.lock();
    in_.emplace(passes_, p_.thread_slot());
  }
  void unlock() {
    in_.reset();
    mu_.unlock();
  }
  // One step of a wait while a marker is set; still_set() reads it again.
  template <class StillSet>
  void wait(unsigned& spins, StillSet&& still_set) const {
    passes_.wait(spins, still_set, "canary: a commit marker is set that no writer will clear (damaged pool)",
                 p_.thread_slot());
  }

 private:
  pm::pool& p_;
  std::mutex mu_;
  common::marker_passes passes_;
  std::optional<common::marker_passes::section> in_;  // the writer's, while it holds mu_
};

template <class Node>
class skiplist {
 public:
  skiplist(pm::pool& p, Node* head, const writer_mutex& writers) : p_(p), head_(head), writers_(writers) {}
  Node* at(uint64_t off) const { return p_.ptr<Node>(off); }

  // Commits a level-0 link: tagged store, persist, untag. Readers that see
  // the tag wait, so nobody observes a link that a crash could still undo.
  // `fence` false only for the canary's flush_without_fence mutant.
  void link0(Node* pred, uint64_t target, bool fence = true) {
    common::store_rel(&pred->next[0], target | k_unpersisted);
    p_.flush(&pred->next[0], 8);
    if (fence) p_.fence();
    common::store_rel(&pred->next[0], target);
    p_.flush(&pred->next[0], 8);  // so a clean close never leaves a tag
  }
  uint64_t read_link0(Node* x) const {
    uint64_t o;
    for (unsigned spins = 0; (o = common::load_acq(&x->next[0])) & k_unpersisted;)
      writers_.wait(spins, [&] { return common::load_acq(&x->next[0]) & k_unpersisted; });
    return o;
  }

  // Upper levels are hints (rebuilt by recovery), flushed so that a clean
  // close finds them durable; the writer mutex orders these flushes.
  void link_upper(Node** preds, uint64_t off, uint32_t height) {
    for (uint32_t i = 1; i < height; ++i) {
      common::store_rel(&preds[i]->next[i], off);
      p_.flush(&preds[i]->next[i], 8);
    }
  }
  void unlink_upper(Node** preds, Node* n) {
    for (uint32_t i = n->height; i-- > 1;) {
      common::store_rel(&preds[i]->next[i], n->next[i]);
      p_.flush(&preds[i]->next[i], 8);
    }
  }

  // Writer search (mutex held): preds per level; returns the level-0
  // successor (first node not before the key) or null.
  template <class Before>
  Node* find(Node** preds, Before&& before) {
    Node* x = head_;
    for (uint32_t i = k_max_height; i-- > 0;) {
      for (uint64_t o; (o = x->next[i]) && before(o);) x = at(o);
      preds[i] = x;
    }
    uint64_t o = x->next[0];
    return o ? at(o) : nullptr;
  }
  // Reader search: the first level-0 node not before the key (null at the
  // end), read once and tested. Never "the predecessor, then its next link
  // read again": a writer may link a node that sorts before the key right
  // after the predecessor in between, and a scan would return it (keys below
  // `from`, out of order) and a lookup would miss its key (mutant
  // scan_rereads_pred).
  template <class Before>
  Node* read_succ(Before&& before) {
    Node* x = read_upper(before);
    for (;;) {
      uint64_t o = read_link0(x);
      if (!o) return nullptr;
      if (!before(o)) return at(o);
      x = at(o);
    }
  }
  // The old search (the mutant only): the last node before the key on level 0.
  template <class Before>
  Node* read_pred(Before&& before) {
    Node* x = read_upper(before);
    for (uint64_t o; (o = read_link0(x)) && before(o);) x = at(o);
    return x;
  }

  // Down the upper levels (hints): the last node there before the key.
  template <class Before>
  Node* read_upper(Before&& before) {
    Node* x = head_;
    for (uint32_t i = k_max_height; i-- > 1;)
      for (uint64_t o; (o = common::load_acq(&x->next[i])) && before(o);) x = at(o);
    return x;
  }

  // check(): every upper level holds level-0 nodes, in level-0 order, of a
  // height that reaches it. Level 0 has been checked (offsets, heights,
  // keys rising); `valid(o)` says whether an upper link may be followed at
  // all (a damaged pool: it is read before it is compared), `less(a, b)`
  // orders two nodes by key. Each match moves on along level 0, so a cycle
  // on an upper level fails instead of looping.
  template <class Valid, class Less>
  check_result check_upper(Valid&& valid, Less&& less) const {
    for (uint32_t i = 1; i < k_max_height; ++i) {
      uint64_t o0 = head_->next[0];
      for (uint64_t o = head_->next[i]; o; o = at(o)->next[i]) {
        if (!valid(o)) return check_result::fail("level " + std::to_string(i) + " link to a damaged node");
        if (at(o)->height <= i) return check_result::fail("node on a level above its height");
        while (o0 && less(o0, o)) o0 = at(o0)->next[0];
        if (o0 != o) return check_result::fail("level " + std::to_string(i) + " holds a node not on level 0");
        o0 = at(o0)->next[0];
      }
    }
    return {};
  }

  // After a crash: walks level 0 clearing UNPERSISTED tags, checks each
  // node's offset and height before following it (errc::corrupt), lets
  // `visit(node)` validate and repair the rest (it throws errc::corrupt),
  // and rebuilds the upper levels. Allocates nothing; returns the count.
  template <class Size, class Visit>
  int64_t recover(Size&& node_size, Visit&& visit) {
    Node* last[k_max_height];
    for (auto& l : last) l = head_;
    Node* x = head_;
    int64_t n = 0;
    for (;;) {
      uint64_t o = x->next[0];
      if (o & k_unpersisted) {
        o &= ~k_unpersisted;
        x->next[0] = o;
        p_.flush(&x->next[0], 8);
      }
      if (!o) break;
      if (!p_.valid_block(o, node_size(1))) throw error(errc::corrupt, "canary: level-0 link outside the heap");
      Node* y = at(o);
      if (y->height < 1 || y->height > k_max_height || !p_.valid_block(o, node_size(y->height)))
        throw error(errc::corrupt, "canary: damaged node on level 0");
      visit(y, n);
      for (uint32_t i = 1; i < y->height; ++i) {
        last[i]->next[i] = o;
        p_.flush(&last[i]->next[i], 8);
        last[i] = y;
      }
      x = y;
      ++n;
    }
    for (uint32_t i = 1; i < k_max_height; ++i) {
      last[i]->next[i] = 0;
      p_.flush(&last[i]->next[i], 8);
    }
    p_.fence();
    return n;
  }

 private:
  pm::pool& p_;
  Node* head_;
  const writer_mutex& writers_;
};

}  // namespace pmindex::basic::canary::detail

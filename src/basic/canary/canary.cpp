#include "basic/canary/canary.hpp"

#include <immintrin.h>

#include <atomic>
#include <cstring>
#include <mutex>
#include <string>

#include "basic/canary/node.hpp"
#include "common/mutant.hpp"
#include "pmindex/error.hpp"

namespace pmindex::basic::canary {

using namespace detail;


namespace {

template <class T>
T load_acq(const T* p) {
  return __atomic_load_n(p, __ATOMIC_ACQUIRE);
}
template <class T>
void store_rel(T* p, T v) {
  __atomic_store_n(p, v, __ATOMIC_RELEASE);
}

class canary_index final : public u64_index {
 public:
  canary_index(pm::pool& p, open_kind kind, const index_config& cfg) : u64_index(p), p_(p), mut_(cfg) {
    if (kind == open_kind::created) {
      uint64_t off = p_.alloc_or_throw(k_root_size);
      root_ = p_.ptr<root>(off);
      std::memset(static_cast<void*>(root_), 0, k_root_size);
      root_->magic = k_root_magic;
      root_->head.height = k_max_height;
      p_.persist(root_, k_root_size);
      p_.set_root(off);
      count_ = 0;
      return;
    }
    uint64_t off = p_.root();
    if (!off || off + k_root_size > p_.size() || p_.ptr<root>(off)->magic != k_root_magic)
      throw error(errc::corrupt, "canary: the pool has no valid root");
    root_ = p_.ptr<root>(off);
    if (kind == open_kind::dirty) recover();
  }

  bool insert(uint64_t key, uint64_t value) override {
    std::lock_guard lk(wmu_);
    node* preds[k_max_height];
    node* succ = find(key, preds);
    if (succ && succ->key == key) return false;
    uint32_t h = random_height();
    uint64_t size = alloc_size(h);
    uint64_t off = p_.alloc_or_throw(size);  // nothing changed yet if full
    node* n = p_.ptr<node>(off);
    n->key = key;
    n->value = value;
    n->height = h;
    n->seq = 0;
    for (uint32_t i = 0; i < h; ++i) n->next[i] = preds[i]->next[i];
    if (mut_.on(mutant::torn_16byte)) shadow(n) = value;
    if (!mut_.on(mutant::publish_before_flush)) p_.persist(n, size);
    link0(preds[0], off);
    if (mut_.on(mutant::publish_before_flush)) p_.persist(n, size);
    // Upper levels are hints (rebuilt by recovery); flushed so that a clean
    // close finds them durable. The mutex release orders these flushes.
    for (uint32_t i = 1; i < h; ++i) {
      store_rel(&preds[i]->next[i], off);
      p_.flush(&preds[i]->next[i], 8);
    }
    if (count_ >= 0) ++count_;
    return true;
  }

  bool update(uint64_t key, uint64_t value) override {
    std::lock_guard lk(wmu_);
    node* preds[k_max_height];
    node* n = find(key, preds);
    if (!n || n->key != key) return false;
    uint32_t s = n->seq;
    store_rel(&n->seq, s + 1);  // readers wait: the new value is not durable
    std::atomic_signal_fence(std::memory_order_seq_cst);
    store_rel(&n->value, value);
    if (mut_.on(mutant::torn_16byte)) {
      shadow(n) = value;  // second word, second line: not atomic with the first
      p_.flush(&n->value, 8);
      p_.flush(&shadow(n), 8);
      p_.fence();
    } else {
      p_.persist(&n->value, 8);
    }
    store_rel(&n->seq, s + 2);
    return true;
  }

  bool remove(uint64_t key) override {
    std::lock_guard lk(wmu_);
    node* preds[k_max_height];
    node* n = find(key, preds);
    if (!n || n->key != key) return false;
    uint64_t off = p_.off(n);
    for (uint32_t i = n->height; i-- > 1;) {
      store_rel(&preds[i]->next[i], n->next[i]);
      p_.flush(&preds[i]->next[i], 8);
    }
    if (mut_.on(mutant::free_before_durable)) {
      store_rel(&preds[0]->next[0], n->next[0]);
      p_.free(off);  // reused by the next insert, before the unlink is fenced
      p_.flush(&preds[0]->next[0], 8);
    } else {
      link0(preds[0], n->next[0]);
      p_.retire(off);
    }
    if (count_ >= 0) --count_;
    return true;
  }

  std::optional<uint64_t> lookup(uint64_t key) override {
    auto g = p_.pin();
    node* x = read_pred(key);
    uint64_t o = read_link0(x);
    if (!o) return std::nullopt;
    node* y = p_.ptr<node>(o);
    if (y->key != key) return std::nullopt;
    return read_value(y);
  }

  size_t scan(uint64_t from, size_t count, record* out) override {
    auto g = p_.pin();
    node* x = read_pred(from);
    size_t n = 0;
    while (n < count) {
      uint64_t o = read_link0(x);
      if (!o) break;
      x = p_.ptr<node>(o);
      out[n++] = {x->key, read_value(x)};
    }
    return n;
  }

  check_result check() override {
    std::lock_guard lk(wmu_);
    int64_t n = 0;
    node* prev = nullptr;
    for (uint64_t o = root_->head.next[0]; o; o = p_.ptr<node>(o)->next[0]) {
      if (o & k_unpersisted) return check_result::fail("level-0 link with UNPERSISTED bit");
      if (!p_.is_allocated(o)) return check_result::fail("node " + std::to_string(o) + " is not allocated");
      node* x = p_.ptr<node>(o);
      if (x->height < 1 || x->height > k_max_height) return check_result::fail("bad node height");
      if (prev && prev->key >= x->key)
        return check_result::fail("keys out of order at " + std::to_string(x->key));
      if (mut_.on(mutant::torn_16byte) && shadow(x) != x->value)
        return check_result::fail("torn value of key " + std::to_string(x->key));
      prev = x;
      ++n;
    }
    for (uint32_t i = 1; i < k_max_height; ++i) {
      uint64_t o0 = root_->head.next[0];
      for (uint64_t o = root_->head.next[i]; o; o = p_.ptr<node>(o)->next[i]) {
        node* x = p_.ptr<node>(o);
        if (x->height <= i) return check_result::fail("node on a level above its height");
        while (o0 && p_.ptr<node>(o0)->key < x->key) o0 = p_.ptr<node>(o0)->next[0];
        if (o0 != o) return check_result::fail("level " + std::to_string(i) + " holds a node not on level 0");
      }
    }
    if (count_ >= 0 && count_.load() != n) return check_result::fail("record count mismatch");
    count_ = n;
    return {};
  }

  void trace(pm::pool::trace_sink& sink) override {
    sink.add(p_.off(root_), k_root_size);
    for (uint64_t o = root_->head.next[0]; o; o = p_.ptr<node>(o)->next[0])
      sink.add(o, alloc_size(p_.ptr<node>(o)->height));
  }

  index_stats stats() override {
    index_stats s;
    if (count_ < 0) check();
    s.records = static_cast<uint64_t>(count_.load());
    auto u = p_.usage();
    s.pm_bytes_used = u.used_bytes;
    s.pm_bytes_reserved = u.reserved_bytes;
    s.dram_bytes = u.dram_bytes + sizeof(*this);
    return s;
  }

 private:
  uint64_t alloc_size(uint32_t h) const {
    uint64_t s = node_size(h);
    return mut_.on(mutant::torn_16byte) && s < k_shadow_offset + 8 ? k_shadow_offset + 8 : s;
  }
  static uint64_t& shadow(node* n) {
    return *reinterpret_cast<uint64_t*>(reinterpret_cast<char*>(n) + k_shadow_offset);
  }

  // Commits a level-0 link: tagged store, persist, untag. Readers that see
  // the tag wait, so nobody observes a link that a crash could still undo.
  void link0(node* pred, uint64_t target) {
    store_rel(&pred->next[0], target | k_unpersisted);
    p_.flush(&pred->next[0], 8);
    if (!mut_.on(mutant::flush_without_fence)) p_.fence();
    store_rel(&pred->next[0], target);
    p_.flush(&pred->next[0], 8);  // so a clean close never leaves a tag
  }

  // Writer search (mutex held): preds per level; returns the level-0
  // successor (first node with key >= key) or null.
  node* find(uint64_t key, node** preds) {
    node* x = &root_->head;
    for (uint32_t i = k_max_height; i-- > 0;) {
      for (uint64_t o; (o = x->next[i]) && p_.ptr<node>(o)->key < key;) x = p_.ptr<node>(o);
      preds[i] = x;
    }
    uint64_t o = x->next[0];
    return o ? p_.ptr<node>(o) : nullptr;
  }

  // Reader search: the last node with key < key on level 0 (or the head).
  node* read_pred(uint64_t key) {
    node* x = &root_->head;
    for (uint32_t i = k_max_height; i-- > 1;)
      for (uint64_t o; (o = load_acq(&x->next[i])) && p_.ptr<node>(o)->key < key;) x = p_.ptr<node>(o);
    for (uint64_t o; (o = read_link0(x)) && p_.ptr<node>(o)->key < key;) x = p_.ptr<node>(o);
    return x;
  }

  static uint64_t read_link0(node* x) {
    uint64_t o;
    while ((o = load_acq(&x->next[0])) & k_unpersisted) _mm_pause();
    return o;
  }

  static uint64_t read_value(node* x) {
    for (;;) {
      uint32_t s1 = load_acq(&x->seq);
      if (s1 & 1) {
        _mm_pause();
        continue;
      }
      uint64_t v = load_acq(&x->value);
      std::atomic_thread_fence(std::memory_order_acquire);
      if (load_acq(&x->seq) == s1) return v;
    }
  }

  // After a crash: validate level 0 defensively, clear tags and seqlocks,
  // rebuild the upper levels from level 0. Allocates nothing.
  void recover() {
    node* last[k_max_height];
    for (auto& l : last) l = &root_->head;
    node* x = &root_->head;
    int64_t n = 0;
    const uint64_t lo = p_.header().heap_offset, hi = p_.size();
    bool first = true;
    uint64_t prev_key = 0;
    for (;;) {
      uint64_t o = x->next[0];
      if (o & k_unpersisted) {
        o &= ~k_unpersisted;
        x->next[0] = o;
        p_.flush(&x->next[0], 8);
      }
      if (!o) break;
      if (o < lo || o + node_size(1) > hi || o % 16)
        throw error(errc::corrupt, "canary: level-0 link outside the heap");
      node* y = p_.ptr<node>(o);
      if (y->height < 1 || y->height > k_max_height || (!first && y->key <= prev_key))
        throw error(errc::corrupt, "canary: damaged node on level 0");
      first = false;
      prev_key = y->key;
      y->seq = 0;
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
    count_ = n;
  }

  pm::pool& p_;
  root* root_ = nullptr;
  std::mutex wmu_;
  std::atomic<int64_t> count_{-1};  // -1: not counted yet (clean open); read by stats()
  common::mutant_switch<mutant> mut_;
};

}  // namespace

std::unique_ptr<index> make_canary(pm::pool& p, open_kind k, const index_config& c) {
  return std::make_unique<canary_index>(p, k, c);
}

}  // namespace pmindex::basic::canary

#include "basic/canary/canary.hpp"

#include <algorithm>
#include <immintrin.h>

#include <atomic>
#include <cstring>
#include <mutex>
#include <string>

#include "basic/canary/list.hpp"
#include "basic/canary/node.hpp"
#include "common/atomics.hpp"
#include "common/mutant.hpp"
#include "pmindex/error.hpp"

namespace pmindex::basic::canary {

using namespace detail;
using common::load_acq;
using common::store_rel;

namespace {

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
    list().link_upper(preds, off, h);
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
    list().unlink_upper(preds, n);
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
    node* y = read_succ(key);
    if (!y || y->key != key) return std::nullopt;
    return read_value(y);
  }

  size_t scan(uint64_t from, size_t count, record* out) override {
    auto g = p_.pin();
    if (mut_.on(mutant::scan_rereads_pred)) return scan_from_pred(from, count, out);
    size_t n = 0;
    for (node* x = count ? read_succ(from) : nullptr; x && n < count;) {
      out[n++] = {x->key, read_value(x)};
      uint64_t o = list().read_link0(x);
      x = o ? p_.ptr<node>(o) : nullptr;
    }
    return n;
  }

  check_result check() override {
    std::lock_guard lk(wmu_);
    int64_t n = 0;
    node* prev = nullptr;
    for (uint64_t o = root_->head.next[0]; o; o = p_.ptr<node>(o)->next[0]) {
      if (o & k_unpersisted) return check_result::fail("level-0 link with UNPERSISTED bit");
      if (!valid_node(o)) return check_result::fail("node " + std::to_string(o) + " is not an allocated node");
      node* x = p_.ptr<node>(o);
      if (prev && prev->key >= x->key)
        return check_result::fail("keys out of order at " + std::to_string(x->key));
      if (x->seq & 1) return check_result::fail("odd seqlock with no writer running, key " + std::to_string(x->key));
      if (mut_.on(mutant::torn_16byte) && shadow(x) != x->value)
        return check_result::fail("torn value of key " + std::to_string(x->key));
      prev = x;
      ++n;
    }
    auto upper = list().check_upper([&](uint64_t o) { return valid_node(o); },
                                    [&](uint64_t a, uint64_t b) { return p_.ptr<node>(a)->key < p_.ptr<node>(b)->key; });
    if (!upper.ok) return upper;
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
    if (count_ < 0) check();
    return list_stats(p_, count_.load(), sizeof(*this));
  }

 private:
  uint64_t alloc_size(uint32_t h) const {
    return mut_.on(mutant::torn_16byte) ? shadow_offset(h) + 8 : node_size(h);
  }
  // Past the node's links (a tall node's next[5] is at offset 64) and never
  // in the value's line.
  static uint64_t shadow_offset(uint32_t h) { return std::max(k_shadow_offset, node_size(h)); }
  static uint64_t& shadow(node* n) {
    return *reinterpret_cast<uint64_t*>(reinterpret_cast<char*>(n) + shadow_offset(n->height));
  }

  // A node check() may read: an allocated block in the heap, big enough
  // for its height (a damaged pool may link anything).
  bool valid_node(uint64_t o) const {
    if (!p_.valid_block(o, node_size(1)) || !p_.is_allocated(o)) return false;
    uint32_t h = p_.ptr<node>(o)->height;
    return h >= 1 && h <= k_max_height && p_.block_size(o) >= node_size(h);
  }

  using list_t = skiplist<node>;
  list_t list() const { return {p_, &root_->head, wmu_}; }
  void link0(node* pred, uint64_t target) { list().link0(pred, target, !mut_.on(mutant::flush_without_fence)); }
  node* find(uint64_t key, node** preds) {
    return list().find(preds, [&](uint64_t o) { return p_.ptr<node>(o)->key < key; });
  }
  node* read_succ(uint64_t key) {
    return list().read_succ([&](uint64_t o) { return p_.ptr<node>(o)->key < key; });
  }
  // The scan without its fix (mutant scan_rereads_pred): the
  // predecessor's link read a second time. The race window (a few
  // instructions, hit when a reader is preempted there) is widened by a
  // short spin so that the stress test meets it in seconds on any machine.
  size_t scan_from_pred(uint64_t from, size_t count, record* out) {
    node* x = list().read_pred([&](uint64_t o) { return p_.ptr<node>(o)->key < from; });
    for (int i = 0; i < 200; ++i) _mm_pause();
    size_t n = 0;
    while (n < count) {
      uint64_t o = list().read_link0(x);
      if (!o) break;
      x = p_.ptr<node>(o);
      out[n++] = {x->key, read_value(x)};
    }
    return n;
  }

  uint64_t read_value(node* x) const {
    for (unsigned spins = 0;;) {
      uint32_t s1 = load_acq(&x->seq);
      if (s1 & 1) {
        wmu_.wait(spins, [&] { return load_acq(&x->seq) == s1; });
        continue;
      }
      uint64_t v = load_acq(&x->value);
      std::atomic_thread_fence(std::memory_order_acquire);
      if (load_acq(&x->seq) == s1) return v;
    }
  }

  // After a crash: validate level 0 defensively (keys strictly rising),
  // clear tags and seqlocks, rebuild the upper levels. Allocates nothing.
  void recover() {
    uint64_t prev_key = 0;
    count_ = list().recover(node_size, [&](node* y, int64_t i) {
      if (i && y->key <= prev_key) throw error(errc::corrupt, "canary: damaged node on level 0");
      prev_key = y->key;
      y->seq = 0;
    });
  }

  pm::pool& p_;
  root* root_ = nullptr;
  writer_mutex wmu_{p_};
  std::atomic<int64_t> count_{-1};  // -1: not counted yet (clean open); read by stats()
  common::mutant_switch<mutant> mut_;
};

}  // namespace

std::unique_ptr<index> make_canary(pm::pool& p, open_kind k, const index_config& c) {
  return std::make_unique<canary_index>(p, k, c);
}

}  // namespace pmindex::basic::canary

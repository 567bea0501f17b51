// canary, keys=bytes: the skip list of canary.cpp over byte keys and values
// held in immutable kv blocks (protocol in canary.hpp, layout in node.hpp).
//
// What commits each change (persist mode):
//   insert  kv block and node written and flushed, fence; then the level-0
//           link of the predecessor: store with the UNPERSISTED tag, flush,
//           fence, untag (flushed, so a clean close leaves no tag);
//   update  new kv block written and flushed, fence; then the node's kv
//           word swings the same way (tagged store, flush, fence, untag);
//           the old block is retired once the swing is durable;
//   remove  the level-0 unlink as for insert; node and kv block retired.
// Readers wait while a link or kv word is tagged, so nothing a reader sees
// can be undone by a crash.
#include <immintrin.h>

#include <atomic>
#include <cstring>
#include <mutex>
#include <string>

#include "basic/canary/canary.hpp"
#include "basic/canary/list.hpp"
#include "basic/canary/node.hpp"
#include "common/atomics.hpp"
#include "common/full_pool.hpp"
#include "common/kv_block.hpp"
#include "common/mutant.hpp"
#include "common/root_block.hpp"
#include "pmindex/error.hpp"

namespace pmindex::basic::canary {

using namespace detail;
using common::load_acq;
using common::store_rel;

namespace {

class canary_bytes final : public bytes_index {
 public:
  canary_bytes(pm::pool& p, open_kind kind, const index_config& cfg) : bytes_index(p), p_(p), mut_(cfg) {
    if (kind == open_kind::created) {
      root_ = common::create_root<broot>(
          p_, k_broot_magic, [](broot& r) { r.head.height = k_max_height; }, k_broot_size);
      count_ = 0;
      return;
    }
    root_ = common::attach_root<broot>(p_, k_broot_magic, "canary", k_broot_size);
    if (kind == open_kind::dirty) recover();
  }

  // Every update and remove retires blocks: a write that met a full pool
  // is tried once more when they came back (common/full_pool.hpp).
  bool insert(std::string_view key, std::string_view value) override {
    return common::retry_when_full(p_, [&] { return insert_once(key, value); });
  }
  bool update(std::string_view key, std::string_view value) override {
    return common::retry_when_full(p_, [&] { return update_once(key, value); });
  }

  bool insert_once(std::string_view key, std::string_view value) {
    check_key(key);
    check_value(value);
    std::lock_guard lk(wmu_);
    bnode* preds[k_max_height];
    bnode* succ = find(key, preds);
    if (succ && key_of(succ) == key) return false;
    uint32_t h = random_height();
    uint64_t size = bnode_size(h);
    uint64_t kv = new_kv(key, value);  // nothing is changed yet if the pool is full
    uint64_t off;
    try {
      off = p_.alloc_or_throw(size);
    } catch (...) {
      p_.free(kv);  // never published
      throw;
    }
    bnode* n = p_.ptr<bnode>(off);
    n->kv = kv;
    n->height = h;
    n->reserved = 0;
    for (uint32_t i = 0; i < h; ++i) n->next[i] = preds[i]->next[i];
    p_.persist(n, size);  // its fence makes the kv block durable too
    list().link0(preds[0], off);
    if (mut_.on(mutant::kv_publish_before_flush)) flush_kv(kv);
    list().link_upper(preds, off, h);
    if (count_ >= 0) ++count_;
    return true;
  }

  bool update_once(std::string_view key, std::string_view value) {
    check_key(key);
    check_value(value);
    std::lock_guard lk(wmu_);
    bnode* preds[k_max_height];
    bnode* n = find(key, preds);
    if (!n || key_of(n) != key) return false;
    uint64_t kv = new_kv(key, value);
    if (!mut_.on(mutant::kv_publish_before_flush)) p_.fence();  // the block before the word naming it
    uint64_t old = n->kv;
    store_rel(&n->kv, kv | k_unpersisted);
    p_.flush(&n->kv, 8);
    p_.fence();
    store_rel(&n->kv, kv);
    p_.flush(&n->kv, 8);
    if (mut_.on(mutant::kv_publish_before_flush)) flush_kv(kv);
    p_.retire(old);
    return true;
  }

  bool remove(std::string_view key) override {
    check_key(key);
    std::lock_guard lk(wmu_);
    bnode* preds[k_max_height];
    bnode* n = find(key, preds);
    if (!n || key_of(n) != key) return false;
    uint64_t off = p_.off(n), kv = n->kv;
    list().unlink_upper(preds, n);
    if (mut_.on(mutant::kv_free_before_durable)) p_.free(kv);  // reusable while a crash can still reach it
    list().link0(preds[0], n->next[0]);
    p_.retire(off);
    if (!mut_.on(mutant::kv_free_before_durable)) p_.retire(kv);
    if (count_ >= 0) --count_;
    return true;
  }

  bool lookup(std::string_view key, std::string* value) override {
    check_key(key);
    auto g = p_.pin();
    bnode* y = read_succ(key);
    if (!y) return false;
    uint64_t kv = read_kv(y);
    if (common::kv_key(p_, kv) != key) return false;
    if (value) value->assign(common::kv_value(p_, kv));
    return true;
  }

  size_t scan(std::string_view from, size_t count, record_buffer& out) override {
    auto g = p_.pin();
    size_t n = 0;
    for (bnode* x = count ? read_succ(from) : nullptr; x && n < count; ++n) {
      uint64_t kv = read_kv(x);
      out.push_back(common::kv_key(p_, kv), common::kv_value(p_, kv));
      uint64_t o = list().read_link0(x);
      x = o ? p_.ptr<bnode>(o) : nullptr;
    }
    return n;
  }

  check_result check() override {
    std::lock_guard lk(wmu_);
    int64_t n = 0;
    std::string_view prev;
    for (uint64_t o = root_->head.next[0]; o; o = p_.ptr<bnode>(o)->next[0]) {
      if (o & k_unpersisted) return check_result::fail("level-0 link with UNPERSISTED bit");
      if (!valid_node(o)) return check_result::fail("node " + std::to_string(o) + " is not an allocated node");
      bnode* x = p_.ptr<bnode>(o);
      if (x->kv & k_unpersisted) return check_result::fail("kv word with UNPERSISTED bit");
      if (!common::kv_block_valid(p_, x->kv, max_key(), max_value()) || !p_.is_allocated(x->kv))
        return check_result::fail("node " + std::to_string(o) + " names a bad kv block");
      std::string_view k = common::kv_key(p_, x->kv);
      if (n && !(prev < k)) return check_result::fail("keys out of order at node " + std::to_string(o));
      prev = k;
      ++n;
    }
    auto upper = list().check_upper([&](uint64_t o) { return valid_node(o); },
                                    [&](uint64_t a, uint64_t b) { return key_of(at(a)) < key_of(at(b)); });
    if (!upper.ok) return upper;
    if (count_ >= 0 && count_.load() != n) return check_result::fail("record count mismatch");
    count_ = n;
    return {};
  }

  void trace(pm::pool::trace_sink& sink) override {
    sink.add(p_.off(root_), k_broot_size);
    for (uint64_t o = root_->head.next[0]; o; o = p_.ptr<bnode>(o)->next[0]) {
      bnode* x = p_.ptr<bnode>(o);
      sink.add(o, bnode_size(x->height));
      sink.add(x->kv, common::kv_block_size(p_, x->kv));
    }
  }

  index_stats stats() override {
    if (count_ < 0) check();
    return list_stats(p_, count_.load(), sizeof(*this));
  }

 private:
  // A kv block holding {key, value}, flushed (no fence). The mutant writes
  // it without a flush; it is flushed only after it is published.
  uint64_t new_kv(std::string_view key, std::string_view value) {
    if (!mut_.on(mutant::kv_publish_before_flush)) return common::make_kv_block(p_, key, value);
    uint64_t off = p_.alloc_or_throw(common::kv_block_bytes(key.size(), value.size()));
    auto* b = p_.ptr<common::kv_block>(off);
    b->klen = static_cast<uint32_t>(key.size());
    b->vlen = static_cast<uint32_t>(value.size());
    if (!key.empty()) std::memcpy(b->data, key.data(), key.size());
    if (!value.empty()) std::memcpy(b->data + key.size(), value.data(), value.size());
    return off;
  }
  void flush_kv(uint64_t kv) { p_.flush(p_.ptr<char>(kv), common::kv_block_size(p_, kv)); }

  // The node's kv block, once its swing is durable (readers wait on the tag).
  uint64_t read_kv(const bnode* n) const {
    uint64_t kv;
    for (unsigned spins = 0; (kv = load_acq(&n->kv)) & k_unpersisted;)
      wmu_.wait(spins, [&] { return load_acq(&n->kv) & k_unpersisted; });
    return kv;
  }
  // A node check() may read (see canary.cpp); its kv block is checked apart.
  bool valid_node(uint64_t o) const {
    if (!p_.valid_block(o, bnode_size(1)) || !p_.is_allocated(o)) return false;
    uint32_t h = p_.ptr<bnode>(o)->height;
    return h >= 1 && h <= k_max_height && p_.block_size(o) >= bnode_size(h);
  }
  std::string_view key_of(const bnode* n) const { return common::kv_key(p_, read_kv(n)); }

  using list_t = skiplist<bnode>;
  list_t list() const { return {p_, &root_->head, wmu_}; }
  bnode* at(uint64_t off) const { return p_.ptr<bnode>(off); }
  bnode* find(std::string_view key, bnode** preds) {
    return list().find(preds, [&](uint64_t o) { return key_of(at(o)) < key; });
  }
  bnode* read_succ(std::string_view key) {
    return list().read_succ([&](uint64_t o) { return key_of(at(o)) < key; });
  }

  // After a crash: besides the list's checks (list.hpp), each kv word
  // loses its tag (the swing's tagged store reached memory: it stands), its
  // block is validated, keys rise strictly. Allocates nothing.
  void recover() {
    std::string_view prev;
    count_ = list().recover(bnode_size, [&](bnode* y, int64_t i) {
      if (y->kv & k_unpersisted) {
        y->kv &= ~k_unpersisted;
        p_.flush(&y->kv, 8);
      }
      if (!common::kv_block_valid(p_, y->kv, k_bytes_max_key, k_bytes_max_value))
        throw error(errc::corrupt, "canary: damaged kv block on level 0");
      std::string_view k = common::kv_key(p_, y->kv);
      if (i && !(prev < k)) throw error(errc::corrupt, "canary: keys out of order on level 0");
      prev = k;
    });
  }

  pm::pool& p_;
  broot* root_ = nullptr;
  writer_mutex wmu_{p_};
  std::atomic<int64_t> count_{-1};  // -1: not counted yet (clean open); read by stats()
  common::mutant_switch<mutant> mut_;
};

}  // namespace

std::unique_ptr<index> make_canary_bytes(pm::pool& p, open_kind k, const index_config& c) {
  return std::make_unique<canary_bytes>(p, k, c);
}

}  // namespace pmindex::basic::canary

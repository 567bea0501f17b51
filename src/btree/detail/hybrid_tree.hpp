// keys=u64: the hybrid B+-tree (detail/hybrid_core.hpp) with 8-byte keys and
// values in the leaf slots, the layout of a u64-only FPTree / LB+-Tree. The
// u64 calls are native; the byte calls take 8-byte keys and values
// (u64_index). Removes retire emptied leaves (hybrid_core.hpp, "Empty
// leaves"), so every operation pins the pool's epoch.
#pragma once

#include <algorithm>

#include "btree/detail/hybrid_core.hpp"

namespace pmindex::btree::detail {

template <class Ops>
class hybrid_tree final : public hybrid_index<u64_index, Ops> {
  using leaf = typename Ops::leaf;
  static_assert(std::is_same_v<typename Ops::keys, u64_keys>);

 public:
  hybrid_tree(pm::pool& p, open_kind kind, const index_config& cfg) : hybrid_index<u64_index, Ops>(p, kind, cfg) {}

  // A split that finds the pool full gets back the leaves retired by removes
  // (reclaim(), unpinned) and tries once more.
  bool insert(uint64_t key, uint64_t value) override {
    for (bool again = false;; again = true) {
      try {
        auto g = this->pool().pin();
        return core_.insert(key, value) == ins::done;
      } catch (const error& e) {
        if (e.code() != errc::pool_full || again) throw;
      }
      core_.reclaim();
    }
  }

  bool update(uint64_t key, uint64_t value) override {
    auto g = this->pool().pin();
    uint64_t old;
    return core_.update(key, value, old);
  }

  bool remove(uint64_t key) override {
    auto g = this->pool().pin();
    uint64_t old;
    return core_.remove(key, old);
  }

  std::optional<uint64_t> lookup(uint64_t key) override {
    auto g = this->pool().pin();
    uint64_t v = 0;
    bool found = false;
    core_.read_leaf(key, [&](leaf* l) { found = core_.ops().find(l, key, v); });
    if (!found) return std::nullopt;
    return v;
  }

  size_t scan(uint64_t from, size_t count, record* out) override {
    if (!count) return 0;
    auto g = this->pool().pin();
    record buf[64];  // >= Ops::max_entries()
    size_t got = 0;
    uint64_t lower = from;
    const size_t room = core_.ops().max_entries();
    core_.scan_leaves(lower, count, buf, [&](record* b, size_t m) {
      const size_t take = std::min(m, count - got);
      if (b != out + got) std::copy(b, b + take, out + got);
      got += take;
      if (got == count) return false;
      if (got) {
        if (out[got - 1].key == UINT64_MAX) return false;
        lower = std::max(lower, out[got - 1].key + 1);
      }
      return true;
    }, [&]() -> record* { return count - got >= room ? out + got : nullptr; });
    return got;
  }


 private:
  using hybrid_index<u64_index, Ops>::core_;
};

}  // namespace pmindex::btree::detail

// PermART machinery shared by both layouts: see core.hpp.
#include "art/permart/core.hpp"

#include <string>

#include "common/root_block.hpp"

namespace pmindex::art::permart::detail {

void core::open_root(open_kind k, uint64_t magic, uint64_t old_magic, const char* name) {
  if (k == open_kind::created) {
    root_ = common::create_root<root>(p_, magic, [](root& r) {
      r.h.kind = uint8_t(kind::root);
      r.run = 1;
    });
    return;
  }
  const uint64_t ro = p_.root();
  if (p_.valid_block(ro, sizeof(root)) && p_.ptr<root>(ro)->magic == old_magic)
    throw error(errc::bad_version, std::string(name) +
                                       ": the pool has the inner-node layout before in-place growth (an older "
                                       "pmindex); recreate it with this version");
  root_ = common::attach_root<root>(p_, magic, name);
  if (k == open_kind::dirty) {
    root_->h.lock = 0;
    // A spare link of an older version (the remove reserve replaced it):
    // never used now, still traced, so it stays owned and allocated.
    uint64_t sp = root_->spare;
    if (sp && !p_.valid_block(sp, k_link_size))
      throw error(errc::corrupt, std::string(name) + ": bad spare link in the root");
  }
}

void core::finish_open(open_kind k) {
  if (k != open_kind::created) {
    // Stamps of earlier runs stay below every stamp of this one, so their
    // (stale) previous-version pointers are never followed.
    root_->run += 1;
    p_.persist(&root_->run, 8);
  }
  clock_.reset(root_->run << k_run_shift);
}

uint64_t core::build_inner(fresh_blocks& fb, header h, const entry* e, unsigned n, uint64_t extra) {
  uint64_t off;
  if (n <= k_sparse_cap) {
    off = fb.alloc(sizeof(sparse) + extra);
    auto* s = p_.ptr<sparse>(off);
    std::memset(static_cast<void*>(s), 0, sizeof(sparse));
    h.kind = uint8_t(kind::sparse);
    h.count = uint8_t(n);
    s->h = h;
    for (unsigned i = 0; i < n; ++i) s->keys[i] = uint8_t(e[i].byte), s->slots[i] = e[i].value;
  } else if (n <= k_indirect_cap) {
    off = fb.alloc(sizeof(indirect) + extra);
    auto* s = p_.ptr<indirect>(off);
    std::memset(static_cast<void*>(s), 0, sizeof(indirect));
    h.kind = uint8_t(kind::indirect);
    h.count = uint8_t(n);
    s->h = h;
    for (unsigned i = 0; i < n; ++i) s->keys[i] = uint8_t(e[i].byte), s->slots[i] = e[i].value;
  } else {
    off = fb.alloc(sizeof(full) + extra);
    auto* s = p_.ptr<full>(off);
    std::memset(static_cast<void*>(s), 0, sizeof(full));
    h.kind = uint8_t(kind::full);
    s->h = h;
    for (unsigned i = 0; i < n; ++i) s->slots[e[i].byte] = e[i].value;
  }
  return off;
}

uint64_t core::new_link(fresh_blocks& fb, uint64_t gives_back) {
  // Volatile by nature: recovery resets a link without reading it (and
  // nulls it before tracing, so a link of any block size is fine), so its
  // contents are never flushed.
  if (uint64_t off = fb.try_alloc(k_link_size)) return off | k_link;
  return fb.alloc_for_remove(gives_back) | k_link;
}

// Commits a write: `new_raw` (a built, flushed node, or a link) replaces
// `old_raw` in `slot`, whose owner the caller has locked.
//  1. stamp "to be decided", previous version = old value (volatile fields)
//  2. fence: the new node's flushed lines are durable before the pointer is
//  3. store the pointer with UNPERSISTED, flush, fence: now durable
//  4. untag (readers may follow it), flush so a clean close keeps no tag
//  5. settle the stamp (the write's linearization point), then retire the
//     old value: no snapshot taken from now on can walk back to it.
void core::replace(uint64_t* slot, uint64_t old_raw, uint64_t new_raw, bool retire_old) {
  header* h = hdr(new_raw);  // a link shares the {stamp, prev} prefix
  h->stamp = sync::k_stamp_tbd;
  store_rel(&h->prev, old_raw);
  if (!mut_.on(mutant::publish_before_flush)) p_.fence();
  store_rel(slot, new_raw | k_unpersisted);
  p_.flush(slot, 8);
  bool fence = !mut_.on(mutant::flush_without_fence);
  if (mut_.on(mutant::free_before_durable) && retire_old && old_raw) {
    p_.free(untag(old_raw));  // the next write reuses it before this swing is fenced
    retire_old = false;
    fence = false;
  }
  if (fence) p_.fence();
  store_rel(slot, new_raw);
  p_.flush(slot, 8);
  sync::settle_stamp(&h->stamp, clock_);
  if (retire_old && old_raw) p_.retire(untag(old_raw));
}

void core::wait_tag(unsigned& spins, uint64_t* slot) const {
  markers_.wait(spins, [&] { return load_acq(slot) & k_unpersisted; },
                "permart: a slot tagged UNPERSISTED that no writer will untag (damaged pool)",
                p_.thread_slot());
}

void core::wait_log(unsigned& spins, uint64_t* meta) const {
  markers_.wait(spins, [&] { return load_acq(meta) & k_log_unpersisted; },
                "permart: a log entry tagged UNPERSISTED that no writer will untag (damaged pool)",
                p_.thread_slot());
}

core::node_lock::node_lock(core& c, header* n) : markers_(c.markers_), slot_(c.p_.thread_slot()), n_(n) {
  sync::version_lock lk(n->lock);
  for (unsigned spins = 0;;) {
    const uint32_t v = lk.load();
    if (v & sync::version_lock::k_obsolete) {
      met_obsolete(n);
      return;
    }
    if (v & sync::version_lock::k_locked) {
      c.wait_lock(spins, n);  // outside a section: see common/marker_passes.hpp
      continue;
    }
    if ((ok_ = markers_.take(slot_, [&]() noexcept { return lk.try_lock(v); }))) return;
  }
}

void core::wait_lock(unsigned& spins, header* n) {
  markers_.wait(spins, [&] { return sync::version_lock(n->lock).locked(); },
                "permart: a node's lock is held by no writer (damaged pool)", p_.thread_slot());
}

void core::met_obsolete(const header* n) {
  if (n == t_obsolete_) throw error(errc::corrupt, "permart: an obsolete node is still in the tree (damaged pool)");
  t_obsolete_ = n;
}

void core::note_link(uint64_t raw, uint64_t key, std::string_view bkey) noexcept {
  // Past this many waiting notes, or without DRAM for one (the write has
  // committed: it must not throw now), a link just stays until an insert
  // reuses its slot (or the next recovery), as before notes existed.
  constexpr size_t k_max_notes = size_t{1} << 20;
  try {
    link_note n{hdr(raw)->stamp, p_.epochs().global_epoch(), key, std::string(bkey)};
    std::lock_guard lk(notes_mu_);
    if (notes_.size() >= k_max_notes) return;
    notes_.push_back(std::move(n));
    nnotes_.store(notes_.size(), std::memory_order_relaxed);
  } catch (const std::bad_alloc&) {
  }
}

// Why nulling is safe: the note's epoch was read after the link's stamp
// settled, and its grace period has passed, so every thread pinned now
// pinned after that; a snapshot takes its stamp after pinning, from a clock
// that was already >= the link's stamp, so it sees the link, i.e. null,
// never the versions behind it. A link stamped <= the note's stamp (the
// same link, or one a later remove left in the same slot with an equal
// stamp) is therefore null for everyone. Why no flush and no fence: both
// words mean null, recovery nulls every link without reading it (so a
// crash that keeps the old word is harmless, even after the link's block is
// reused), and a clean close loses no store. The link is retired: a reader
// may have loaded it just before.
int core::clear_link(header* parent, uint64_t* slot, uint64_t raw, uint64_t stamp) {
  if (hdr(raw)->stamp > stamp) return 0;  // a younger link: its own note clears it
  node_lock lk(*this, parent);
  if (!lk.ok() || load_acq(slot) != raw) return -1;
  store_rel(slot, uint64_t{0});
  p_.retire(untag(raw));
  return 1;
}

header* core::recover_node(uint64_t* slot) {
  uint64_t v = *slot, w = v & ~k_unpersisted;
  if (w != v) {
    *slot = w;
    p_.flush(slot, 8);  // fenced once at the end of the open (run bump)
  }
  if (!w) return nullptr;
  if ((w & k_tag_mask & ~k_link) || !p_.valid_block(untag(w), is_link(w) ? k_link_size : 64))
    throw error(errc::corrupt, "permart: slot points outside the heap");
  if (is_link(w)) {
    // A version link stands for null (its contents were never persisted):
    // the slot becomes null and the tracing that follows frees the link.
    // Either value means null, so a crash before the flush is harmless.
    *slot = 0;
    p_.flush(slot, 8);  // fenced once at the end of the open (run bump)
    return nullptr;
  }
  header* h = hdr(w);
  h->stamp = 0;
  h->prev = 0;
  h->lock = 0;
  return h;
}

std::string core::check_word(uint64_t* slot, header*& node) const {
  node = nullptr;
  uint64_t v = load_acq(slot);
  if (v & k_unpersisted) return "slot with UNPERSISTED bit";
  if (!v) return {};
  if (!p_.is_allocated(untag(v))) return "slot points to a free block " + std::to_string(untag(v));
  // Every stamp handed out is at most the clock: a later one (a damaged
  // pool) would make snapshot reads follow its prev pointer, never checked.
  const uint64_t now = clock_.write_stamp();
  if (is_link(v)) {
    uint64_t st = load_acq(&hdr(v)->stamp);
    return st == sync::k_stamp_tbd ? "unsettled link" : st > now ? "link stamped in the future" : "";
  }
  header* h = hdr(v);
  if (h->stamp == sync::k_stamp_tbd) return "unsettled stamp";
  if (h->stamp > now) return "node stamped in the future";
  if (h->lock & sync::version_lock::k_locked) return "lock held";
  if (h->lock & sync::version_lock::k_obsolete) return "obsolete node in the tree";
  if (h->kind < uint8_t(kind::leaf) || h->kind > uint8_t(kind::full)) return "unknown node kind";
  node = h;
  return {};
}

std::string core::check_inner_shape(header* h) {
  if (h->kind == uint8_t(kind::sparse)) return listed_check(reinterpret_cast<sparse*>(h));
  if (h->kind == uint8_t(kind::indirect)) return listed_check(reinterpret_cast<indirect*>(h));
  return {};
}

}  // namespace pmindex::art::permart::detail

// The item store: see store.hpp for the record layout and the guarantees.
#include "store.hpp"

#include <algorithm>
#include <cstring>
#include <functional>

#include "pmindex/error.hpp"

namespace pmindex::server {

namespace {

// The durable boot counter's key: a leading NUL byte, which no client key
// can have, so no command ever sees or changes it. Indexes whose keys are
// shorter (the pmemids structures take 16 bytes) keep it under a short one.
constexpr std::string_view k_boot_key{"\0pmindex-serve:boot", 19};
constexpr std::string_view k_short_boot_key{"\0boot", 5};

bool live(const item& it, uint32_t now) { return it.exptime == 0 || it.exptime > now; }

}  // namespace

bool valid_key(std::string_view key, bool control_chars) noexcept {
  if (key.empty() || key.size() > k_max_key) return false;
  for (unsigned char c : key)
    if (c == ' ' || c == 0 || (!control_chars && (c < 0x20 || c == 0x7f))) return false;
  return true;
}

bool valid_binary_key(std::string_view key) noexcept {
  return !key.empty() && key.size() <= k_max_key && key[0] != '\0';
}

int64_t ttl_left(uint32_t exptime, uint32_t now) noexcept {
  if (exptime == 0) return -1;
  return exptime > now ? int64_t{exptime} - now : 0;
}

bool store::visible(std::string_view key, std::string_view value, uint32_t now, item& out) {
  if (key.empty() || key[0] == '\0') return false;
  return decode(value, out) && live(out, now);
}

store::store(index& idx, size_t max_item)
    : idx_(idx), max_item_(max_item), boot_key_(idx.max_key() >= k_boot_key.size() ? k_boot_key : k_short_boot_key) {
  if (idx.keys() != key_kind::bytes)
    throw error(errc::usage, "pmindex serve needs an index created keys=bytes (this pool holds keys=u64)");
  if (max_item_ + k_item_header > idx.max_value())
    throw error(errc::usage, "--max-item-size " + std::to_string(max_item_) + " is over what " + idx.name() +
                                 " stores (" + std::to_string(idx.max_value() - k_item_header) +
                                 " bytes of data)");
  new_boot();
}

// Counting the records walks the index (0.9 s at 10M items), so it is not
// done before the server listens: the sweeper calls this first.
void store::count_items() {
  uint64_t n = idx_.stats().records;
  items_.fetch_add(n > 0 ? n - 1 : 0, std::memory_order_relaxed);  // less the boot record
}

uint32_t store::absolute_expiry(int64_t e) noexcept {
  if (e == 0) return 0;
  if (e < 0) return 1;  // already expired (memcached: stored, never returned)
  if (e <= k_relative_expiry_max) e += now();
  return static_cast<uint32_t>(std::min<int64_t>(e, UINT32_MAX));
}

// The boot counter records the highest cas region that may be in use; a
// restart moves past it. It is written before its region is reached (when
// the previous region has 2^20 ids left), so no id is ever handed out twice.
void store::new_boot() {
  std::string v;
  uint64_t boot = 0;
  if (idx_.lookup(boot_key_, &v) && v.size() == 8) boot = value_u64(v);
  ++boot;
  idx_.upsert(boot_key_, value_bytes(boot));
  cas_.store((boot << k_seq_bits) | 1, std::memory_order_relaxed);
}

uint64_t store::next_cas() {
  constexpr uint64_t mask = (uint64_t{1} << k_seq_bits) - 1;
  uint64_t v = cas_.fetch_add(1, std::memory_order_relaxed);
  if ((v & mask) == mask - (uint64_t{1} << 20)) {
    std::lock_guard g(boot_mu_);
    idx_.upsert(boot_key_, value_bytes((v >> k_seq_bits) + 1));
  }
  return v;
}

std::mutex& store::lock_for(std::string_view key) {
  return stripes_[std::hash<std::string_view>{}(key) % k_stripes].mu;
}

void store::encode(std::string& out, uint64_t cas, uint32_t flags, uint32_t exptime, std::string_view a,
                   std::string_view b) {
  out.resize(k_item_header + a.size() + b.size());
  char* p = out.data();
  std::memcpy(p, &cas, 8);
  std::memcpy(p + 8, &flags, 4);
  std::memcpy(p + 12, &exptime, 4);
  if (!a.empty()) std::memcpy(p + k_item_header, a.data(), a.size());
  if (!b.empty()) std::memcpy(p + k_item_header + a.size(), b.data(), b.size());
}

// A record shorter than the header was not written by the server (e.g. a
// pool filled by `pmindex load`): it reads as absent.
bool store::decode(std::string_view v, item& out) {
  if (v.size() < k_item_header) return false;
  std::memcpy(&out.cas, v.data(), 8);
  std::memcpy(&out.flags, v.data() + 8, 4);
  std::memcpy(&out.exptime, v.data() + 12, 4);
  out.data = v.substr(k_item_header);
  return true;
}

bool store::get(std::string_view key, std::string& buf, item& out) {
  if (!idx_.lookup(key, &buf) || !decode(buf, out)) return false;
  return live(out, now());
}

// `fresh`: the key is absent (insert) rather than present (update).
result store::write(std::string_view key, const std::string& value, bool fresh) {
  for (int attempt = 0;; ++attempt) {
    try {
      if (fresh) {
        if (idx_.insert(key, value)) items_.fetch_add(1, std::memory_order_relaxed);
      } else {
        idx_.update(key, value);
      }
      return result::stored;
    } catch (const error& e) {
      if (e.code() == errc::value_too_long) return result::too_large;
      if (e.code() != errc::pool_full) throw;
      if (attempt == 1) return result::out_of_memory;
    }
    // A full pool fails a write with nothing changed. The items this thread
    // replaced or deleted last are retired, not yet free (epochs): with large
    // items that can be most of the pool. End their grace period (waiting
    // for a worker pinned in an older epoch) and try once more. The
    // concurrent indexes do this inside each write too; the pmemids ones,
    // served behind a lock, do not.
    idx_.pool().reclaim_before_full();
  }
}

result store::put(store_mode m, std::string_view key, uint32_t flags, int64_t exptime, std::string_view data,
                  uint64_t cas_unique, uint64_t* new_cas) {
  if (data.size() > max_item_) return result::too_large;
  uint32_t exp = absolute_expiry(exptime);
  std::string old, value;
  item it;
  std::lock_guard g(lock_for(key));
  // set needs only to know whether the key is there (insert or update), so
  // it does not copy the old item (up to -I bytes) out.
  bool present = idx_.lookup(key, m == store_mode::set ? nullptr : &old);
  bool is_live = m != store_mode::set && present && decode(old, it) && live(it, now());
  bool compare = cas_unique != 0 && (m == store_mode::replace || m == store_mode::append || m == store_mode::prepend);
  if (compare && is_live && it.cas != cas_unique) return result::exists;
  switch (m) {
    case store_mode::set:
      break;
    case store_mode::add:
      if (is_live) return result::not_stored;
      break;
    case store_mode::replace:
      if (!is_live) return result::not_stored;
      break;
    case store_mode::append:
    case store_mode::prepend: {
      if (!is_live) return result::not_stored;
      if (it.data.size() + data.size() > max_item_) return result::too_large;
      bool app = m == store_mode::append;
      uint64_t c = next_cas();
      encode(value, c, it.flags, it.exptime, app ? it.data : data, app ? data : it.data);
      result r = write(key, value, false);
      if (r == result::stored && new_cas) *new_cas = c;
      return r;
    }
    case store_mode::cas:
      if (!is_live) return result::not_found;
      if (it.cas != cas_unique) return result::exists;
      break;
  }
  uint64_t c = next_cas();
  encode(value, c, flags, exp, data);
  result r = write(key, value, !present);
  if (r == result::stored && new_cas) *new_cas = c;
  return r;
}

result store::remove(std::string_view key, uint64_t cas_unique) {
  std::string old;
  item it;
  std::lock_guard g(lock_for(key));
  if (!idx_.lookup(key, &old)) return result::not_found;
  bool is_live = decode(old, it) && live(it, now());
  if (cas_unique != 0 && is_live && it.cas != cas_unique) return result::exists;
  // An expired item is removed all the same (it is garbage), but reads as
  // not found, as it would have a moment later after a sweep.
  if (idx_.remove(key)) items_.fetch_sub(1, std::memory_order_relaxed);
  return is_live ? result::deleted : result::not_found;
}

result store::arith(std::string_view key, bool incr, uint64_t delta, uint64_t& out) {
  arith_op op;
  op.incr = incr;
  op.delta = delta;
  std::string buf;
  item it;
  result r = arith(key, op, buf, it);
  if (r == result::stored) out = std::stoull(std::string(it.data));
  return r;
}

result store::arith(std::string_view key, const arith_op& op, std::string& buf, item& out) {
  std::string old;
  item it;
  std::lock_guard g(lock_for(key));
  bool present = idx_.lookup(key, &old);
  bool hit = present && decode(old, it) && live(it, now());
  std::string text;
  uint32_t flags = 0, exp = 0;
  if (!hit) {
    if (!op.vivify) return result::not_found;
    text = std::to_string(op.initial);
    exp = absolute_expiry(op.vivify_exptime);
  } else {
    if (op.cas_unique != 0 && it.cas != op.cas_unique) return result::exists;
    // A decimal number of at most 20 digits, optionally followed by spaces
    // (memcached pads a shrunk number in place with spaces).
    std::string_view d = it.data;
    size_t digits = 0;
    while (digits < d.size() && d[digits] >= '0' && d[digits] <= '9') ++digits;
    if (digits == 0 || digits > 20) return result::non_numeric;
    for (size_t i = digits; i < d.size(); ++i)
      if (d[i] != ' ') return result::non_numeric;
    uint64_t n = 0;
    for (size_t i = 0; i < digits; ++i) {
      uint64_t c = static_cast<uint64_t>(d[i] - '0');
      if (n > (UINT64_MAX - c) / 10) return result::non_numeric;
      n = n * 10 + c;
    }
    // incr wraps at 2^64, decr stops at 0
    n = op.incr ? n + op.delta : (op.delta > n ? 0 : n - op.delta);
    text = std::to_string(n);
    flags = it.flags;
    exp = op.set_exptime ? absolute_expiry(op.exptime) : it.exptime;
  }
  uint64_t c = next_cas();
  encode(buf, c, flags, exp, text);
  result r = write(key, buf, !present);
  if (r == result::stored) decode(buf, out);
  return r;
}

result store::touch(std::string_view key, int64_t exptime) {
  std::string old, value;
  item it;
  std::lock_guard g(lock_for(key));
  if (!idx_.lookup(key, &old) || !decode(old, it) || !live(it, now())) return result::not_found;
  encode(value, it.cas, it.flags, absolute_expiry(exptime), it.data);
  result r = write(key, value, false);
  return r == result::stored ? result::touched : r;
}

bool store::touch_get(std::string_view key, int64_t exptime, std::string& buf, item& out) {
  std::string old;
  item it;
  std::lock_guard g(lock_for(key));
  if (!idx_.lookup(key, &old) || !decode(old, it) || !live(it, now())) return false;
  encode(buf, it.cas, it.flags, absolute_expiry(exptime), it.data);
  if (write(key, buf, false) != result::stored) return false;
  return decode(buf, out);
}

uint64_t store::flush_all() { return remove_if(false); }
uint64_t store::sweep_expired() { return remove_if(true); }

bool store::run_due_flush() {
  uint32_t at = flush_at_.load(std::memory_order_relaxed);
  if (at == 0 || at > now() || !flush_at_.compare_exchange_strong(at, 0)) return false;
  flush_all();
  return true;
}

// Walks the index in key order, a few records at a time (values are copied
// by scan, so batches stay small), removing each item that qualifies. A key
// written meanwhile is re-read under its lock before it is removed.
uint64_t store::remove_if(bool only_expired) {
  // A batch copies its values out: at most 16 MiB of them, or one item.
  const size_t k_batch = std::clamp<size_t>((size_t{16} << 20) / (max_item_ + k_item_header), 1, 16);
  record_buffer buf;
  std::string from, cur;
  uint64_t removed = 0;
  for (;;) {
    buf.clear();
    size_t n = idx_.scan(from, k_batch, buf);
    for (size_t i = 0; i < n; ++i) {
      std::string_view k = buf.key(i);
      if (!k.empty() && k[0] == '\0') continue;  // the boot record
      item it;
      if (only_expired && (!decode(buf.value(i), it) || live(it, now()))) continue;
      std::lock_guard g(lock_for(k));
      if (only_expired && (!idx_.lookup(k, &cur) || !decode(cur, it) || live(it, now()))) continue;
      if (idx_.remove(k)) {
        items_.fetch_sub(1, std::memory_order_relaxed);
        ++removed;
      }
    }
    if (n < k_batch) return removed;
    from.assign(buf.key(n - 1));
    from.push_back('\0');  // the least key after the last one seen
  }
}

}  // namespace pmindex::server

// Shared body of the FPTree and LB+-Tree byte-key tests (fptree_bytes_test.cpp,
// lbtree_bytes_test.cpp), keys=bytes: a std::map<std::string, std::string>
// oracle over random keys of 0..300 bytes sharing prefixes (\0 and \xff
// bytes included), prefix chains, the longest key and one byte more, values
// of 0, 8, 100, 4096 bytes and 1 MiB, scans from between keys and across
// prefix boundaries, clean and dirty reopen with a block-count leak check, a
// full pool, damaged offsets (errc::corrupt), two writers and a reader.
#pragma once

#include "common/kv_block.hpp"
#include "hybrid_btree_test.hpp"

namespace pmindex::btree_test {

using smap = std::map<std::string, std::string>;
// k_huge: the largest value these tests write (the conformance suite writes
// one of max_value bytes, common::k_max_value, for every index).
inline constexpr size_t k_max_key = 4096, k_max_value = common::k_max_value, k_huge = size_t{1} << 20;

inline options bytes_opts(const std::string& name, const std::string& path, pm::mode m = pm::mode::persist,
                          const std::string& params = "") {
  return opts(name, path, m, params.empty() ? "keys=bytes" : "keys=bytes," + params);
}

// scan(from, count) against the oracle.
inline void expect_scan_bytes(index& idx, const smap& ref, std::string_view from, size_t count) {
  record_buffer out;
  size_t n = idx.scan(from, count, out);
  ASSERT_EQ(n, out.size());
  auto it = ref.lower_bound(std::string(from));
  size_t i = 0;
  for (; i < count && it != ref.end(); ++i, ++it) {
    ASSERT_LT(i, n) << "scan stopped early (from a " << from.size() << "-byte key, count " << count << ")";
    ASSERT_EQ(out.key(i), it->first) << "scan position " << i;
    ASSERT_EQ(out.value(i), it->second) << "scan position " << i;
  }
  ASSERT_EQ(n, i) << "scan returned too much";
}

// check(), every key looked up, one full scan and range, the record count.
inline void expect_equal_bytes(index& idx, const smap& ref) {
  auto c = idx.check();
  ASSERT_TRUE(c.ok) << c.message;
  std::string v;
  for (auto& [k, val] : ref) {
    ASSERT_TRUE(idx.lookup(k, &v)) << k.size() << "-byte key missing";
    ASSERT_EQ(v, val);
  }
  ASSERT_NO_FATAL_FAILURE(expect_scan_bytes(idx, ref, "", ref.size() + 1));
  record_buffer all;
  idx.range("", std::string(k_max_key, '\xff'), all);
  ASSERT_EQ(all.size(), ref.size());
  ASSERT_EQ(idx.stats().records, ref.size());
}

// Keys that share prefixes: one of a few stems, then 0..300 bytes drawn
// from a small alphabet with \0 and \xff.
inline std::string random_key(std::mt19937_64& rng, size_t max_tail = 300) {
  static const std::string stems[] = {"", "a", std::string("a\0", 2), "ab", "http://www.example.com/",
                                      "\xff\xff", std::string("\0\0\0", 3), "key-00000"};
  static const char alphabet[] = {'\0', '\x01', 'a', 'b', 'z', '\x7f', '\x80', '\xfe', '\xff'};
  std::string k = stems[rng() % std::size(stems)];
  size_t tail = rng() % 4 == 0 ? rng() % (max_tail + 1) : rng() % 12;
  for (size_t i = 0; i < tail; ++i) k += alphabet[rng() % std::size(alphabet)];
  return k;
}

inline std::string random_value(std::mt19937_64& rng, bool allow_huge) {
  static const size_t sizes[] = {0, 8, 8, 8, 100, 100, 4096};
  size_t n = allow_huge && rng() % 500 == 0 ? k_huge : sizes[rng() % std::size(sizes)];
  std::string v(n, '\0');
  for (size_t i = 0; i < n && i < 64; ++i) v[i] = static_cast<char>(rng());
  if (n > 64) v[n - 1] = static_cast<char>(rng());
  return v;
}

inline void random_bytes_ops(index& idx, smap& ref, std::mt19937_64& rng, int n, bool huge = true) {
  for (int i = 0; i < n; ++i) {
    std::string k = random_key(rng);
    switch (rng() % 8) {
      case 0: case 1: case 2: {
        std::string v = random_value(rng, huge);
        ASSERT_EQ(idx.insert(k, v), ref.emplace(k, v).second) << "insert";
        break;
      }
      case 3: {
        std::string v = random_value(rng, huge);
        bool present = ref.count(k);
        ASSERT_EQ(idx.update(k, v), present) << "update";
        if (present) ref[k] = v;
        break;
      }
      case 4: ASSERT_EQ(idx.remove(k), ref.erase(k) == 1) << "remove"; break;
      case 5: ASSERT_NO_FATAL_FAILURE(expect_scan_bytes(idx, ref, k, 1 + rng() % 70)); break;
      default: {
        std::string v;
        auto it = ref.find(k);
        ASSERT_EQ(idx.lookup(k, &v), it != ref.end()) << "lookup";
        if (it != ref.end()) { ASSERT_EQ(v, it->second); }
      }
    }
  }
}

// Prefix chains ("", "a", "a\0", "a\0\0", "ab", ...) all present at once,
// the longest key, one byte more (an error that changes nothing), scans
// from between keys and across prefix boundaries.
inline void prefix_chains_and_limits(const std::string& name, const std::string& params = "") {
  pool_file pf(name + "-bchain");
  auto idx = open(bytes_opts(name, pf.path(), pm::mode::persist, params));
  ASSERT_EQ(idx->keys(), key_kind::bytes);
  ASSERT_EQ(idx->max_key(), k_max_key);
  ASSERT_EQ(idx->max_value(), k_max_value);
  smap ref;
  std::vector<std::string> keys = {"", std::string(1, '\0'), std::string(2, '\0'), "\xff", "\xff\xff"};
  for (std::string stem : {"a", "b", "\x7f"})
    for (std::string k = stem; k.size() < 40; k.push_back(k.size() % 3 ? '\0' : 'a'))
      for (std::string t : {"", "\x01", "\xff"}) keys.push_back(k + t);
  for (size_t i = 0; i < keys.size(); ++i) {
    std::string v = std::to_string(i);
    ASSERT_EQ(idx->insert(keys[i], v), ref.emplace(keys[i], v).second);
  }
  ASSERT_NO_FATAL_FAILURE(expect_equal_bytes(*idx, ref));
  // Scans from every key, from just after it and from a shortened copy.
  for (auto& [k, v] : ref)
    for (size_t c : {size_t{1}, size_t{3}, size_t{17}, ref.size()}) {
      ASSERT_NO_FATAL_FAILURE(expect_scan_bytes(*idx, ref, k, c));
      ASSERT_NO_FATAL_FAILURE(expect_scan_bytes(*idx, ref, k + std::string(1, '\0'), c));
      if (!k.empty()) { ASSERT_NO_FATAL_FAILURE(expect_scan_bytes(*idx, ref, k.substr(0, k.size() - 1) + "\xff", c)); }
    }
  // Limits: the longest key and value work; one byte more is an error.
  std::string longest(k_max_key, '\xff'), big(k_huge, 'v');
  ASSERT_TRUE(idx->insert(longest, big));
  ref[longest] = big;
  // Scan bounds past the longest key are bounds, not keys (no error).
  ASSERT_NO_FATAL_FAILURE(expect_scan_bytes(*idx, ref, longest + std::string(1, '\0'), 3));
  ASSERT_NO_FATAL_FAILURE(expect_scan_bytes(*idx, ref, std::string(k_max_key + 100, '\xfe'), 3));
  auto used = idx->pool().usage().used_blocks;
  for (auto call : {0, 1, 2, 3, 4}) {
    try {
      std::string too_long(k_max_key + 1, 'k');
      switch (call) {
        case 0: idx->insert(too_long, "v"); break;
        case 1: idx->update(too_long, "v"); break;
        case 2: idx->remove(too_long); break;
        case 3: idx->insert("short", std::string(k_max_value + 1, 'v')); break;
        default: idx->update(longest, std::string(k_max_value + 1, 'v')); break;
      }
      FAIL() << "call " << call << " accepted a key or value over the limit";
    } catch (const error& e) {
      EXPECT_EQ(e.code(), call < 3 ? errc::key_too_long : errc::value_too_long) << e.what();
    }
  }
  EXPECT_EQ(idx->pool().usage().used_blocks, used) << "a rejected call allocated";
  ASSERT_NO_FATAL_FAILURE(expect_equal_bytes(*idx, ref));
  // Values of every size, updated in place of each other.
  for (size_t n : {size_t{0}, size_t{8}, size_t{100}, size_t{4096}, k_huge, size_t{0}}) {
    ASSERT_TRUE(idx->update("a", std::string(n, 'x')));
    ref["a"] = std::string(n, 'x');
    ASSERT_NO_FATAL_FAILURE(expect_scan_bytes(*idx, ref, "a", 2));
  }
  ASSERT_NO_FATAL_FAILURE(expect_equal_bytes(*idx, ref));
  // Remove everything, shortest first, checking as it empties.
  size_t i = 0;
  while (!ref.empty()) {
    auto k = ref.begin()->first;
    ASSERT_TRUE(idx->remove(k));
    ASSERT_FALSE(idx->remove(k));
    ref.erase(k);
    if (++i % 16 == 0) { ASSERT_NO_FATAL_FAILURE(expect_equal_bytes(*idx, ref)); }
  }
  ASSERT_NO_FATAL_FAILURE(expect_equal_bytes(*idx, ref));
}

// Random operations in every mode, then emptied and refilled.
inline void random_bytes_all_modes(const std::string& name, const std::string& params = "") {
  for (auto m : {pm::mode::dram, pm::mode::volatile_, pm::mode::persist, pm::mode::eadr}) {
    SCOPED_TRACE(std::string(pm::to_string(m)));
    pool_file pf(name + "-brand");
    auto idx = open(bytes_opts(name, pf.path(), m, params));
    std::mt19937_64 rng(seed());
    smap ref;
    for (int round = 0; round < 3; ++round) {
      ASSERT_NO_FATAL_FAILURE(random_bytes_ops(*idx, ref, rng, scaled(3000)));
      ASSERT_NO_FATAL_FAILURE(expect_equal_bytes(*idx, ref));
    }
    for (auto& [k, v] : ref) ASSERT_TRUE(idx->remove(k));
    ref.clear();
    ASSERT_NO_FATAL_FAILURE(expect_equal_bytes(*idx, ref));
    ASSERT_NO_FATAL_FAILURE(random_bytes_ops(*idx, ref, rng, scaled(2000)));
    ASSERT_NO_FATAL_FAILURE(expect_equal_bytes(*idx, ref));
  }
}

// The u64 calls on a byte index: 8-byte big-endian keys, 8-byte values,
// ordered and scanned like the integers.
inline void u64_calls_on_bytes(const std::string& name, const std::string& params = "") {
  pool_file pf(name + "-bu64");
  auto idx = open(bytes_opts(name, pf.path(), pm::mode::persist, params));
  std::mt19937_64 rng(seed());
  oracle ref;
  ASSERT_NO_FATAL_FAILURE(random_ops(*idx, ref, rng, scaled(6000), uint64_t{1} << 62));
  ASSERT_NO_FATAL_FAILURE(expect_equal(*idx, ref));
  smap bref;
  for (auto& [k, v] : ref) bref[std::string(key_bytes(k))] = std::string(value_bytes(v));
  ASSERT_NO_FATAL_FAILURE(expect_equal_bytes(*idx, bref));
}

// Clean, then dirty reopens: contents and check(), and after a dirty open
// the traced blocks (anchor, leaves, fence and record blocks) are exactly
// the allocated ones.
inline void reopen_bytes(const std::string& name, const std::string& params = "") {
  pool_file pf(name + "-breopen");
  std::mt19937_64 rng(seed());
  smap ref;
  {
    auto idx = open(bytes_opts(name, pf.path(), pm::mode::persist, params));
    ASSERT_NO_FATAL_FAILURE(random_bytes_ops(*idx, ref, rng, scaled(4000)));
  }  // clean close
  for (int round = 0; round < 3; ++round) {
    auto idx = open(bytes_opts(name, pf.path(), pm::mode::persist, params));
    bool dirty = round > 0;
    ASSERT_EQ(idx->report().was_clean, !dirty);
    if (dirty) {
      ASSERT_EQ(idx->report().traced_blocks, idx->pool().usage().used_blocks) << "leak or double count";
    }
    ASSERT_NO_FATAL_FAILURE(expect_equal_bytes(*idx, ref));
    ASSERT_NO_FATAL_FAILURE(random_bytes_ops(*idx, ref, rng, scaled(4000)));
    ASSERT_NO_FATAL_FAILURE(expect_equal_bytes(*idx, ref));
    if (round < 2) idx->abandon();  // the next open recovers
  }
  auto idx = open(bytes_opts(name, pf.path(), pm::mode::persist, params));
  ASSERT_TRUE(idx->report().was_clean);
  ASSERT_NO_FATAL_FAILURE(expect_equal_bytes(*idx, ref));
}

// A 2 MiB pool filled by inserts: pool_full changes nothing and leaks
// nothing (a dirty reopen traces exactly the allocated blocks); updates and
// removes still work.
inline void full_pool_bytes(const std::string& name, const std::string& params = "") {
  pool_file pf(name + "-bfull");
  auto o = bytes_opts(name, pf.path(), pm::mode::persist, params);
  o.pool_size = 2 << 20;
  std::mt19937_64 rng(seed());
  smap ref;
  {
    auto idx = open(o);
    bool full = false;
    for (int i = 0; i < 1'000'000 && !full; ++i) {
      std::string k = random_key(rng, 60), v(rng() % 200, 'v');
      try {
        if (idx->insert(k, v)) ref[k] = v;
      } catch (const error& e) {
        ASSERT_EQ(e.code(), errc::pool_full) << e.what();
        ASSERT_FALSE(ref.count(k)) << "pool_full for an insert of a present key";
        full = true;
      }
    }
    ASSERT_TRUE(full) << "a 2 MiB pool never filled";
    ASSERT_NO_FATAL_FAILURE(expect_equal_bytes(*idx, ref));
    for (int i = 0; i < 50; ++i) {  // removes make room
      auto victim = ref.begin()->first;
      ASSERT_TRUE(idx->remove(victim));
      ref.erase(victim);
    }
    idx->pool().quiesce();
    ASSERT_TRUE(idx->insert("after", "room"));
    ref["after"] = "room";
    idx->abandon();
  }
  o.open = pm::open_mode::must_exist;
  auto idx = open(o);
  ASSERT_EQ(idx->report().traced_blocks, idx->pool().usage().used_blocks) << "leak after a full pool";
  ASSERT_NO_FATAL_FAILURE(expect_equal_bytes(*idx, ref));
}

// Two writers on keys of their own and a scanning reader.
inline void concurrent_bytes(const std::string& name, const std::string& params = "") {
  pool_file pf(name + "-bconc");
  auto idx = open(bytes_opts(name, pf.path(), pm::mode::persist, params));
  const int n = scaled(6000);
  std::atomic<bool> stop{false};
  std::atomic<int> bad{0};
  auto key = [](int t, int i) { return "t" + std::to_string(t) + "/" + std::string(i % 50, 'x') + std::to_string(i); };
  auto writer = [&](int t) {
    for (int i = 0; i < n; ++i) {
      std::string k = key(t, i);
      if (!idx->insert(k, k)) ++bad;
      if (i % 3 == 0 && !idx->update(k, k + "+")) ++bad;
      if (i % 5 == 0 && !idx->remove(k)) ++bad;
    }
  };
  auto reader = [&] {
    record_buffer out;
    while (!stop.load()) {
      out.clear();
      size_t m = idx->scan("t", 50, out);
      for (size_t i = 1; i < m; ++i)
        if (!(out.key(i - 1) < out.key(i))) ++bad;
      for (size_t i = 0; i < m; ++i)
        if (out.value(i) != out.key(i) && out.value(i) != std::string(out.key(i)) + "+") ++bad;
    }
  };
  std::thread r(reader), w0(writer, 0), w1(writer, 1);
  w0.join();
  w1.join();
  stop = true;
  r.join();
  ASSERT_EQ(bad.load(), 0);
  smap ref;
  for (int t = 0; t < 2; ++t)
    for (int i = 0; i < n; ++i)
      if (i % 5 != 0) ref[key(t, i)] = i % 3 == 0 ? key(t, i) + "+" : key(t, i);
  ASSERT_NO_FATAL_FAILURE(expect_equal_bytes(*idx, ref));
}

// A dirty pool whose first record slot names a block outside the heap, or
// whose length words are too long: errc::corrupt, never a crash. `slot`
// points at the value word of a valid slot of the head leaf.
template <class SlotWord>
void damaged_offsets(const std::string& name, SlotWord&& slot_word) {
  for (int damage = 0; damage < 3; ++damage) {
    pool_file pf(name + "-bdamage");
    {
      auto idx = open(bytes_opts(name, pf.path()));
      for (int i = 0; i < 3; ++i) ASSERT_TRUE(idx->insert("k" + std::to_string(i), "v"));
      auto& p = idx->pool();
      uint64_t* w = slot_word(p, p.ptr<btree::detail::anchor>(p.root())->head);
      if (damage == 0) *w = p.size() - 8;  // outside the heap's blocks
      if (damage == 1) *w = 8;             // in the header
      if (damage == 2) p.ptr<common::kv_block>(*w)->klen = 1 << 30;
      idx->abandon();
    }
    try {
      open(bytes_opts(name, pf.path()));
      FAIL() << "damage " << damage << " was not detected";
    } catch (const error& e) {
      EXPECT_EQ(e.code(), errc::corrupt) << e.what();
    }
  }
}

// The flushes and fences of byte inserts (op 'i'), updates ('u') and
// removes ('r') into a leaf with room (no split), for the header comments.
struct op_cost {
  char op;
  std::string key, value;
  uint64_t lines, fences;
};
inline void expect_costs(index& idx, const std::vector<op_cost>& ops) {
  for (auto& c : ops) {
    auto before = pm::thread_counters();
    bool ok = c.op == 'i' ? idx.insert(c.key, c.value) : c.op == 'u' ? idx.update(c.key, c.value) : idx.remove(c.key);
    auto d = pm::thread_counters() - before;
    EXPECT_TRUE(ok) << c.op << " " << c.key;
    EXPECT_EQ(d.lines_flushed, c.lines) << c.op << " " << c.key << " (" << c.value.size() << "-byte value)";
    EXPECT_EQ(d.fences, c.fences) << c.op << " " << c.key;
  }
}

}  // namespace pmindex::btree_test

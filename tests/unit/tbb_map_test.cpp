// The tbb-map baseline (src/baseline/tbb_map.hpp) beyond the conformance
// suites, which run it like every registered index: its entry, its
// tombstones (removed keys keep their nodes; stats() counts them apart), and
// threads inserting, updating, upserting, removing and looking up own and
// shared keys while another scans, compared at the end with what the
// threads' results imply. Compiled where oneTBB is installed (CMake then
// builds the baseline).
#if __has_include(<oneapi/tbb/concurrent_map.h>)
#include <gtest/gtest.h>

#include <atomic>
#include <cinttypes>
#include <cstdio>
#include <cstring>
#include <map>
#include <optional>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "pmindex/index.hpp"
#include "test_seed.hpp"

namespace pmindex {
namespace {

std::unique_ptr<index> open_tbb(bool bytes) {
  options o;
  o.index = "tbb-map";
  o.mode = pm::mode::dram;
  o.pool_path = "/dev/shm/pmindex-tbb-map-" + std::to_string(::getpid()) + ".pool";  // dram: never made
  o.params = bytes ? "keys=bytes" : "";
  o.quiet = true;
  return open(o);
}

double extra(index& idx, const std::string& name) {
  for (auto& [n, x] : idx.stats().extra)
    if (n == name) return x;
  return -1;
}

// Record `id` in either key kind, the same order as the ids: u64 keys are
// the ids; byte keys "key/" and 16 hex digits (20 bytes: on the heap).
// Values carry a 64-bit tag; byte values are the tag's 8 bytes, followed
// by 40 more when the tag is a multiple of 3 (heap and small-string values).
struct kind {
  bool bytes;

  std::string key(uint64_t id) const {
    char s[24];
    std::snprintf(s, sizeof s, "key/%016" PRIx64, id);
    return s;
  }
  static std::string value(uint64_t tag) {
    std::string v(reinterpret_cast<const char*>(&tag), 8);
    if (tag % 3 == 0) v.append(40, 'v');
    return v;
  }
  static uint64_t tag_of(std::string_view v) {
    uint64_t t;
    std::memcpy(&t, v.data(), 8);
    return t;
  }
  uint64_t id_of(std::string_view k) const {
    return std::strtoull(std::string(k.substr(4)).c_str(), nullptr, 16);
  }

  bool insert(index& x, uint64_t id, uint64_t tag) const {
    return bytes ? x.insert(key(id), value(tag)) : x.insert(id, tag);
  }
  bool update(index& x, uint64_t id, uint64_t tag) const {
    return bytes ? x.update(key(id), value(tag)) : x.update(id, tag);
  }
  bool upsert(index& x, uint64_t id, uint64_t tag) const {
    return bytes ? x.upsert(key(id), value(tag)) : x.upsert(id, tag);
  }
  bool remove(index& x, uint64_t id) const { return bytes ? x.remove(key(id)) : x.remove(id); }
  std::optional<uint64_t> lookup(index& x, uint64_t id) const {
    if (!bytes) return x.lookup(id);
    std::string v;
    if (!x.lookup(key(id), &v)) return std::nullopt;
    if (v != value(tag_of(v))) return UINT64_MAX;  // torn: no writer wrote it
    return tag_of(v);
  }
  // Up to n records from id `from` on, as (id, tag).
  std::vector<std::pair<uint64_t, uint64_t>> scan(index& x, uint64_t from, size_t n) const {
    std::vector<std::pair<uint64_t, uint64_t>> out;
    if (!bytes) {
      std::vector<record> r(n);
      r.resize(x.scan(from, n, r.data()));
      for (auto& [k, v] : r) out.emplace_back(k, v);
      return out;
    }
    record_buffer rb;
    x.scan(key(from), n, rb);
    for (size_t i = 0; i < rb.size(); ++i) {
      const uint64_t t = tag_of(rb.value(i));
      out.emplace_back(id_of(rb.key(i)), rb.value(i) == value(t) ? t : UINT64_MAX);  // torn: UINT64_MAX
    }
    return out;
  }
};

class TbbMap : public testing::TestWithParam<bool> {};

TEST(TbbMapEntry, IsAVolatileBaselineWhoseScansAreNotSnapshots) {
  auto e = find_index("tbb-map");
  ASSERT_TRUE(e) << "built with oneTBB, but tbb-map is not registered";
  EXPECT_EQ(e->family, "baseline");
  EXPECT_TRUE(e->concurrent);
  EXPECT_EQ(e->modes, std::vector<pm::mode>{pm::mode::dram});
  EXPECT_TRUE(e->supports(key_kind::u64) && e->supports(key_kind::bytes));
  auto stdmap = find_index("stdmap");
  ASSERT_TRUE(stdmap);
  EXPECT_EQ(e->max_key, stdmap->max_key);
  EXPECT_EQ(e->max_value, stdmap->max_value);
  EXPECT_EQ(e->scan_guarantee.rfind("sorted", 0), 0u) << e->scan_guarantee;
  EXPECT_NE(e->scan_guarantee.find("not a snapshot"), std::string::npos) << e->scan_guarantee;
}

// Removed keys stay as tombstones: not counted as records, counted apart,
// skipped by scans, revived by an insert without a new node; a byte
// tombstone frees its value.
TEST_P(TbbMap, TombstonesAreSkippedCountedAndRevived) {
  const kind k{GetParam()};
  auto idx = open_tbb(k.bytes);
  constexpr uint64_t n = 1000;
  auto big = [&](uint64_t id) {
    return k.bytes ? idx->insert(k.key(id), std::string(1000, 'b')) : k.insert(*idx, id, id);
  };
  for (uint64_t id = 0; id < n; ++id) ASSERT_TRUE(big(id));
  const uint64_t full = idx->stats().dram_bytes;
  EXPECT_EQ(extra(*idx, "tombstones"), 0);
  for (uint64_t id = 0; id + 1 < n; ++id) ASSERT_TRUE(k.remove(*idx, id));
  EXPECT_FALSE(k.remove(*idx, 0));
  EXPECT_FALSE(k.update(*idx, 0, 5));
  EXPECT_FALSE(k.lookup(*idx, 0).has_value());
  EXPECT_EQ(idx->stats().records, 1u);
  EXPECT_EQ(extra(*idx, "tombstones"), double(n - 1));
  if (k.bytes)
    EXPECT_LE(idx->stats().dram_bytes + (n - 1) * 1000, full) << "a removed key keeps its value";
  else
    EXPECT_EQ(idx->stats().dram_bytes, full) << "a removed key keeps its node";
  auto all = k.scan(*idx, 0, 10);
  ASSERT_EQ(all.size(), 1u);
  EXPECT_EQ(all[0].first, n - 1);
  EXPECT_TRUE(idx->check().ok) << idx->check().message;

  for (uint64_t id = 0; id + 1 < n; ++id) ASSERT_TRUE(big(id));
  EXPECT_EQ(idx->stats().records, n);
  EXPECT_EQ(extra(*idx, "tombstones"), 0);
  EXPECT_EQ(idx->stats().dram_bytes, full) << "a revived key took a new node";
  EXPECT_EQ(k.scan(*idx, 0, 2 * n).size(), n);
}

// Writers on own keys (each result checked against the writer's oracle)
// and on a few shared keys (successful inserts and removes of one key must
// alternate), a scanner beside them, and keys nobody writes after the
// prefill. At the end the index holds exactly what the results imply.
TEST_P(TbbMap, ConcurrentWritersAndScannerMatchTheirResults) {
  const kind k{GetParam()};
  const uint64_t seed = test::test_seed();
  const unsigned writers = 4;
  const uint64_t ops = test::long_run() ? 500000 : 50000;
  const uint64_t slots = 2048;  // ids 4*s + c: c = 0 stable, 1 shared, 2 owned, 3 never written
  const uint64_t shared = 2;    // slots 0 and 1 of class 1: every writer hammers them
  auto idx = open_tbb(k.bytes);
  for (uint64_t s = 0; s < slots; ++s) ASSERT_TRUE(k.insert(*idx, 4 * s, 4 * s << 8));
  auto tag = [](uint64_t id, unsigned w, uint64_t i) { return id << 8 | w << 4 | (i & 15); };

  std::vector<std::map<uint64_t, uint64_t>> own(writers);  // the writer's oracle of its keys
  std::vector<std::vector<int64_t>> net(writers, std::vector<int64_t>(shared));  // inserts - removes
  std::atomic<bool> stop{false};
  std::atomic<uint64_t> scans{0};
  std::vector<std::string> errors(writers + 1);
  auto fail = [&](unsigned who, std::string m) {
    if (errors[who].empty()) errors[who] = std::move(m);
  };

  std::vector<std::thread> th;
  for (unsigned w = 0; w < writers; ++w)
    th.emplace_back([&, w] {
      std::mt19937_64 rng(seed + w);
      for (uint64_t i = 0; i < ops && errors[w].empty(); ++i) {
        const bool sh = rng() % 4 != 0;  // mostly shared keys: the races a lock must decide
        const uint64_t slot = sh ? rng() % shared : (rng() % (slots / writers)) * writers + w;
        const uint64_t id = 4 * slot + (sh ? 1 : 2);
        const uint64_t t = tag(id, w, i);
        const unsigned op = rng() % 5;
        auto& o = own[w];
        const bool had = o.count(id);
        bool r = false;
        switch (op) {
          case 0: r = k.insert(*idx, id, t); break;
          case 1: r = k.update(*idx, id, t); break;
          case 2: r = k.upsert(*idx, id, t); break;
          case 3: r = k.remove(*idx, id); break;
          default: {
            auto v = k.lookup(*idx, id);
            if (v && *v >> 8 != id) fail(w, "lookup of " + std::to_string(id) + " got another key's value");
            if (!sh && v != (had ? std::optional<uint64_t>(o[id]) : std::nullopt))
              fail(w, "lookup of own key " + std::to_string(id) + " differs from the oracle");
            continue;
          }
        }
        if (sh) {
          if ((op == 0 || op == 2) && r) ++net[w][slot];
          if (op == 3 && r) --net[w][slot];
          continue;
        }
        const bool want = op == 1 || op == 3 ? had : !had;  // upsert: true if it inserted
        if (r != want)
          fail(w, "op " + std::to_string(op) + " on own key " + std::to_string(id) + " returned " +
                      std::to_string(r));
        if (op == 3) o.erase(id);
        else if (r || op == 2) o[id] = t;
      }
    });
  th.emplace_back([&] {  // the scanner
    std::mt19937_64 rng(seed + 99);
    while (!stop && errors[writers].empty()) {
      const uint64_t from = rng() % (4 * slots), want = 1 + rng() % 64;
      auto r = k.scan(*idx, from, want);
      ++scans;
      if (r.size() > want) fail(writers, "scan returned more than asked");
      for (size_t i = 0; i < r.size(); ++i) {
        if (r[i].first < from) fail(writers, "scan returned a key below from");
        if (i && r[i - 1].first >= r[i].first) fail(writers, "scan out of order or with a duplicate");
        if (r[i].first % 4 == 3) fail(writers, "scan returned a key never written");
        if (r[i].second >> 8 != r[i].first) fail(writers, "scan returned another key's value");
      }
      // Every stable key of the interval the scan covered, with its value.
      const uint64_t end = r.size() == want ? r.back().first : 4 * slots;
      size_t j = 0;
      for (uint64_t id = (from + 3) / 4 * 4; id <= end && id < 4 * slots; id += 4) {
        while (j < r.size() && r[j].first < id) ++j;
        if (j == r.size() || r[j].first != id || r[j].second != id << 8)
          fail(writers, "scan from " + std::to_string(from) + " missed stable key " + std::to_string(id));
      }
    }
  });
  for (unsigned w = 0; w < writers; ++w) th[w].join();
  stop = true;
  th.back().join();
  for (auto& e : errors) EXPECT_TRUE(e.empty()) << e << " (seed " << seed << ")";
  EXPECT_GT(scans.load(), 0u);

  // What the index must hold now, and how many keys it ever linked.
  std::map<uint64_t, uint64_t> expected;
  uint64_t linked = slots;
  for (uint64_t s = 0; s < slots; ++s) expected[4 * s] = 4 * s << 8;
  for (auto& o : own) expected.insert(o.begin(), o.end());
  std::vector<bool> touched(4 * slots);
  for (unsigned w = 0; w < writers; ++w) {
    std::mt19937_64 rng(seed + w);  // the writer's ids again, for the keys it may have linked
    for (uint64_t i = 0; i < ops; ++i) {
      const bool sh = rng() % 4 != 0;
      const uint64_t slot = sh ? rng() % shared : (rng() % (slots / writers)) * writers + w;
      const unsigned op = rng() % 5;
      if (op == 0 || op == 2) touched[4 * slot + (sh ? 1 : 2)] = true;
    }
  }
  for (bool t : touched) linked += t;
  for (uint64_t s = 0; s < shared; ++s) {
    int64_t sum = 0;
    for (unsigned w = 0; w < writers; ++w) sum += net[w][s];
    auto v = k.lookup(*idx, 4 * s + 1);
    ASSERT_TRUE(sum == 0 || sum == 1) << "shared key " << 4 * s + 1 << ": " << sum
                                      << " more successful inserts than removes (seed " << seed << ")";
    ASSERT_EQ(v.has_value(), sum == 1) << "shared key " << 4 * s + 1 << " (seed " << seed << ")";
    if (v) {
      EXPECT_EQ(*v >> 8, 4 * s + 1);
      expected[4 * s + 1] = *v;
    }
  }
  auto c = idx->check();
  ASSERT_TRUE(c.ok) << c.message;
  auto all = k.scan(*idx, 0, 8 * slots);
  ASSERT_EQ(all.size(), expected.size()) << "seed " << seed;
  const std::vector<std::pair<uint64_t, uint64_t>> want(expected.begin(), expected.end());
  EXPECT_TRUE(all == want) << "seed " << seed;
  EXPECT_EQ(idx->stats().records, expected.size());
  EXPECT_EQ(extra(*idx, "tombstones"), double(linked - expected.size()));
}

INSTANTIATE_TEST_SUITE_P(Keys, TbbMap, testing::Bool(),
                         [](const testing::TestParamInfo<bool>& p) { return p.param ? "bytes" : "u64"; });

}  // namespace
}  // namespace pmindex
#endif

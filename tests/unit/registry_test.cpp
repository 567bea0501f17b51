// The registry and the Index interface's common parts: a toy index added in
// one line, the parameter schema, the u64 <-> bytes adapters, and the rule
// that every persistent index carries a test profile.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <map>
#include <mutex>
#include <thread>

#include "common/mutant.hpp"
#include "dataset.hpp"
#include "index_tests.hpp"
#include "pmindex/error.hpp"
#include "pmindex/index.hpp"

namespace pmindex {
namespace {

// A toy index: a std::map in DRAM, u64 layout.
class toy_index final : public u64_index {
 public:
  toy_index(pm::pool& p, const index_config& c) : u64_index(p), width_(c.u64("width")) {}
  using u64_index::insert, u64_index::update, u64_index::remove, u64_index::lookup, u64_index::scan;
  bool insert(uint64_t k, uint64_t v) override { return m_.emplace(k, v).second; }
  bool update(uint64_t k, uint64_t v) override {
    auto it = m_.find(k);
    return it != m_.end() && ((it->second = v), true);
  }
  bool remove(uint64_t k) override { return m_.erase(k) > 0; }
  std::optional<uint64_t> lookup(uint64_t k) override {
    auto it = m_.find(k);
    if (it == m_.end()) return std::nullopt;
    return it->second;
  }
  size_t scan(uint64_t from, size_t count, record* out) override {
    size_t n = 0;
    for (auto it = m_.lower_bound(from); it != m_.end() && n < count; ++it) out[n++] = {it->first, it->second};
    return n;
  }
  check_result check() override { return {}; }
  void trace(pm::pool::trace_sink&) override {}
  index_stats stats() override { return {m_.size(), 0, 0, 0, {{"width", double(width_)}}}; }

 private:
  std::map<uint64_t, uint64_t> m_;
  uint64_t width_;
};

index_entry make_toy() {
  index_entry e;
  e.name = "toy";
  e.family = "test";
  e.description = "registry test";
  e.concurrent = false;  // a plain std::map
  e.modes = {pm::mode::dram};
  e.params = {{"width", "a number", "4", {}, 1, 16}, {"flavour", "a choice", "plain", {"plain", "salted"}}};
  e.factory = [](pm::pool& p, open_kind, const index_config& c) -> std::unique_ptr<index> {
    return std::make_unique<toy_index>(p, c);
  };
  return e;
}
// The one line that adds an index (once, before the first test uses it).
// Its one mutant is the tests' (index_tests.hpp), not the library's.
void add_toy() {
  [[maybe_unused]] static const bool once = [] {
    register_index(make_toy());
    register_index_tests("toy", {.mutants = {{"broken", "a mutant", "crashtest", "", "x"}}});
    return true;
  }();
}

options toy_opts(const std::string& params = "") {
  add_toy();
  options o;
  o.index = "toy";
  o.mode = pm::mode::dram;
  o.pool_size = 4 << 20;
  o.params = params;
  o.quiet = true;
  return o;
}

errc open_error(const options& o) {
  try {
    open(o);
  } catch (const error& e) {
    return e.code();
  }
  return errc::ok;
}

TEST(Registry, ToyIndexIsRegisteredByOneLine) {
  add_toy();
  auto e = find_index("toy");
  ASSERT_TRUE(e);
  auto idx = open(toy_opts());
  EXPECT_TRUE(idx->insert(5, 6));
  EXPECT_EQ(idx->lookup(5), 6u);
  EXPECT_EQ(idx->keys(), key_kind::u64);
}

TEST(Registry, ParametersAreCheckedAgainstTheSchema) {
  add_toy();
  auto e = find_index("toy");
  auto c = index_config::parse(*e, "");
  EXPECT_EQ(c.u64("width"), 4u);
  EXPECT_EQ(c.get("flavour"), "plain");
  EXPECT_EQ(c.canonical(), "keys=u64,width=4,flavour=plain");
  EXPECT_EQ(index_config::parse(*e, "width=16,flavour=salted").canonical(), "keys=u64,width=16,flavour=salted");
  EXPECT_EQ(open_error(toy_opts("colour=red")), errc::usage);     // unknown name
  EXPECT_EQ(open_error(toy_opts("width=17")), errc::usage);       // out of range
  EXPECT_EQ(open_error(toy_opts("width=-1")), errc::usage);
  EXPECT_EQ(open_error(toy_opts("width=1e3")), errc::usage);
  EXPECT_EQ(open_error(toy_opts("width=99999999999999999999999")), errc::usage);  // overflow
  EXPECT_EQ(open_error(toy_opts("flavour=sour")), errc::usage);   // not a choice
  EXPECT_EQ(open_error(toy_opts("width")), errc::usage);          // not name=value
  EXPECT_EQ(open_error(toy_opts("width=4,width=5")), errc::usage);
  EXPECT_EQ(open_error(toy_opts("keys=bytes")), errc::unsupported);  // a kind it does not take
  EXPECT_EQ(open_error(toy_opts("keys=strings")), errc::usage);
  EXPECT_EQ(open_error(toy_opts("mutant=nope")), errc::usage);
#ifdef PMINDEX_MUTANTS
  EXPECT_EQ(detail::config_access::mutant_id(index_config::parse(*e, "mutant=broken")), 1u);
#else
  EXPECT_EQ(open_error(toy_opts("mutant=broken")), errc::unsupported);
#endif
}

TEST(Registry, EveryPersistentIndexHasATestProfile) {
  for (auto& e : registered_indexes()) {
    if (!e->persistent()) continue;
    EXPECT_TRUE(find_index_tests(e->name).tests.has_value()) << e->name << " is persistent but has no test profile: it would not be "
                                      << "crash-tested (see docs/adding-an-index.md)";
    EXPECT_FALSE(e->scan_guarantee.empty()) << e->name << " does not say what its scans guarantee";
    EXPECT_FALSE(e->key_kinds.empty()) << e->name;
  }
}

// The generated byte-key runs (tests/registry_tests.cmake) use the profile's
// datasets; a key over the index's limit would fail those runs with
// key_too_long instead of testing the index, so each dataset must fit.
TEST(Registry, ByteRunDatasetsFitTheLongestKey) {
  for (auto& e : registered_indexes()) {
    const auto tests = find_index_tests(e->name).tests;
    if (!e->persistent() || !tests) continue;
    if (std::find(e->key_kinds.begin(), e->key_kinds.end(), key_kind::bytes) == e->key_kinds.end()) continue;
    for (auto& name : {tests->bytes_long_dataset, tests->bytes_short_dataset}) {
      auto d = bench::make_dataset(name, 1, bench::key_universe::sparse, true);
      EXPECT_LE(d->max_key(), e->max_key) << e->name << ": dataset " << name << " has keys of up to " << d->max_key()
                                          << " bytes; the index takes " << e->max_key;
    }
  }
}

// A scan guarantee is tested under stress: every concurrent persistent
// index gets stress_<i> (sorted, >= from, every own key present for the
// whole scan returned: tools/cmd_stress.cpp), and one that promises an
// atomic snapshot also runs `stress --check snapshot` among its extra tests.
TEST(Registry, EveryScanGuaranteeIsTestedUnderStress) {
  for (auto& e : registered_indexes()) {
    const auto tests = find_index_tests(e->name).tests;
    if (!e->persistent() || !tests) continue;
    if (!e->ordered) {  // no scan: the guarantee says so
      EXPECT_NE(e->scan_guarantee.find("unordered"), std::string::npos) << e->name << ": " << e->scan_guarantee;
      continue;
    }
    if (e->scan_guarantee.rfind("atomic snapshot", 0) != 0) {
      EXPECT_NE(e->scan_guarantee.find("sorted"), std::string::npos)
          << e->name << ": a scan guarantee that is not a snapshot must state its order: " << e->scan_guarantee;
      continue;
    }
    bool snapshot_test = false;
    for (auto& x : tests->extra)
      snapshot_test |= x.args.find("stress") == 0 && x.args.find("--check snapshot") != std::string::npos && !x.long_run;
    EXPECT_TRUE(snapshot_test) << e->name << " promises an atomic snapshot but runs no `stress --check snapshot`";
  }
}

TEST(Registry, ReadableWhileAnotherThreadRegisters) {
  std::atomic<bool> stop{false};
  std::thread reader([&] {
    while (!stop)
      for (auto& e : registered_indexes()) ASSERT_FALSE(e->name.empty());
  });
  for (int i = 0; i < 200; ++i) {
    index_entry e = make_toy();
    e.name = "toy-" + std::to_string(i % 7);
    register_index(e);
    ASSERT_TRUE(find_index(e.name));
  }
  stop = true;
  reader.join();
}

// ---------------------------------------------------------------- keys

TEST(Keys, IntegerKeysAreBigEndianSoBothOrdersAgree) {
  uint64_t ks[] = {0, 1, 255, 256, 0x0102030405060708, uint64_t{1} << 63, ~uint64_t{0}};
  for (auto a : ks)
    for (auto b : ks) {
      auto ka = key_bytes(a), kb = key_bytes(b);  // (a view of a temporary would dangle)
      std::string sx(std::string_view{ka}), sy(std::string_view{kb});
      EXPECT_EQ(a < b, sx < sy) << a << " " << b;
      EXPECT_EQ(key_u64(sx), a);
    }
  EXPECT_EQ(value_u64(std::string(std::string_view(value_bytes(42)))), 42u);
}

TEST(Keys, ByteOrderIsUnsignedWithPrefixFirst) {
  EXPECT_LT(std::string_view("a"), std::string_view("ab"));
  EXPECT_LT(std::string_view("ab"), std::string_view("b"));
  EXPECT_LT(std::string_view(""), std::string_view("\0", 1));
  EXPECT_LT(std::string_view("\x7f"), std::string_view("\x80"));  // unsigned, not signed, bytes
  EXPECT_LT(std::string_view("\x01"), std::string_view("\xff"));
}

// The byte calls of a u64 index: 8-byte keys and values pass through;
// anything else is a typed error; scans and ranges from any byte string
// start at the right integer key.
TEST(Adapters, ByteCallsOnAU64Index) {
  auto idx = open(toy_opts());
  for (uint64_t k : {uint64_t{10}, uint64_t{0x6100000000000000}, uint64_t{0x6162000000000000}, ~uint64_t{0}})
    ASSERT_TRUE(idx->insert(k, k + 1));
  std::string v;
  EXPECT_TRUE(idx->lookup(std::string_view(key_bytes(10)), &v));
  EXPECT_EQ(value_u64(v), 11u);
  auto code = [&](auto f) {
    try {
      f();
    } catch (const error& e) {
      return e.code();
    }
    return errc::ok;
  };
  EXPECT_EQ(code([&] { idx->insert("123456789", "12345678"); }), errc::key_too_long);
  EXPECT_EQ(code([&] { idx->insert("1234", "12345678"); }), errc::unsupported);
  EXPECT_EQ(code([&] { idx->insert("12345678", "123456789"); }), errc::value_too_long);
  EXPECT_EQ(idx->stats().records, 4u);  // nothing changed

  record_buffer out;
  // "a" < every 8-byte key starting with 'a': the scan starts at 0x61000...
  EXPECT_EQ(idx->scan("a", 10, out), 3u);
  EXPECT_EQ(key_u64(out.key(0)), 0x6100000000000000u);
  out.clear();
  // "ab\0\0\0\0\0\0x" sorts after the key "ab\0\0\0\0\0\0"
  EXPECT_EQ(idx->scan(std::string_view("ab\0\0\0\0\0\0x", 9), 10, out), 1u);
  EXPECT_EQ(key_u64(out.key(0)), ~uint64_t{0});
  out.clear();
  // range ["a", "ab"]: 0x61000... only ("ab" < "ab\0...")
  EXPECT_EQ(idx->range("a", "ab", out), 1u);
  out.clear();
  EXPECT_EQ(idx->range("", "\xff\xff\xff\xff\xff\xff\xff\xff\xff", out), 4u);
  out.clear();
  EXPECT_EQ(idx->range("b", "a", out), 0u);
}

// The u64 calls of a bytes index go through the byte calls.
TEST(Adapters, U64CallsOnABytesIndex) {
  options o;
  o.index = "stdmap";
  o.mode = pm::mode::dram;
  o.pool_size = 4 << 20;
  o.params = "keys=bytes";
  auto idx = open(o);
  ASSERT_EQ(idx->keys(), key_kind::bytes);
  for (uint64_t k : {uint64_t{3}, uint64_t{1} << 40, ~uint64_t{0}}) ASSERT_TRUE(idx->insert(k, k * 2));
  EXPECT_EQ(idx->lookup(uint64_t{1} << 40), uint64_t{1} << 41);
  record r[4];
  ASSERT_EQ(idx->scan(uint64_t{4}, 4, r), 2u);
  EXPECT_EQ(r[0].key, uint64_t{1} << 40);
  std::vector<record> rs;
  EXPECT_EQ(idx->range(0, ~uint64_t{0}, rs), 3u);
  // A record that is not 8/8 bytes cannot be read through the u64 calls.
  ASSERT_TRUE(idx->insert(std::string_view(key_bytes(5)), "long value"));
  EXPECT_THROW(idx->lookup(uint64_t{5}), error);
  std::string v;
  EXPECT_TRUE(idx->lookup(std::string_view(key_bytes(5)), &v));
  EXPECT_EQ(v, "long value");
  EXPECT_EQ(idx->max_key(), 4096u);
}

}  // namespace
}  // namespace pmindex

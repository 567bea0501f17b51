// The harness's datasets (bench/dataset.hpp): generated sets are
// deterministic, distinct, within their length bound and alphabet; files are
// read, deduplicated and refused with the documented errors; values check.
#include <gtest/gtest.h>
#include <unistd.h>
#include <zlib.h>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <set>
#include <string>
#include <vector>

#include "dataset.hpp"
#include "key_grammar.hpp"
#include "key_stats.hpp"
#include "pmindex/error.hpp"
#include "pmindex/index.hpp"
#include "rng.hpp"

namespace pmindex::bench {
namespace {

std::vector<std::string> keys_of(const dataset& d, const std::vector<uint64_t>& ids) {
  std::vector<std::string> out;
  std::string buf;
  for (uint64_t id : ids) out.emplace_back(d.key(id, buf));
  return out;
}

std::vector<uint64_t> first(uint64_t n) {
  std::vector<uint64_t> v(n);
  for (uint64_t i = 0; i < n; ++i) v[i] = i;
  return v;
}

size_t duplicates(std::vector<std::string> v) {
  std::sort(v.begin(), v.end());
  return static_cast<size_t>(v.end() - std::unique(v.begin(), v.end()));
}

bool in_alphabet(const std::string& dataset, const std::string& k) {
  for (unsigned char c : k) {
    bool ok = c > 0x20 && c < 0x7F;  // printable, no space
    if (dataset == "names") ok = std::isalnum(c) || c == '_' || c == '-';
    if (!ok) return false;
  }
  return true;
}

TEST(BenchDataset, GeneratedSetsAreDistinctBoundedAndInTheirAlphabet) {
  for (const char* name : {"names", "wiki", "urls"}) {
    auto d = make_dataset(name, 7);
    const size_t limit = std::string(name) == "names" ? 25 : std::string(name) == "wiki" ? 256 : 2029;
    EXPECT_LE(d->max_key(), limit) << name;
    // The first ids, and ids spread over the whole id space (every template).
    std::vector<uint64_t> ids = first(300000);
    rng r(3);
    for (int i = 0; i < 200000; ++i) ids.push_back(300000 + r.below(d->size() - 300000));
    std::sort(ids.begin(), ids.end());
    ids.erase(std::unique(ids.begin(), ids.end()), ids.end());
    for (uint64_t id = d->size() - 1000; id < d->size(); ++id) ids.push_back(id);
    auto ks = keys_of(*d, ids);
    EXPECT_EQ(duplicates(ks), 0u) << name;
    for (auto& k : ks) {
      ASSERT_LE(k.size(), d->max_key()) << name << ": " << k;
      ASSERT_FALSE(k.empty()) << name;
      ASSERT_TRUE(in_alphabet(name, k)) << name << ": " << k;
    }
  }
}

TEST(BenchDataset, SameSeedSameKeysOtherSeedOtherKeys) {
  for (const char* name : {"names", "wiki", "urls", "u64-bytes"}) {
    auto a = keys_of(*make_dataset(name, 1), first(2000));
    auto b = keys_of(*make_dataset(name, 1), first(2000));
    auto c = keys_of(*make_dataset(name, 2), first(2000));
    EXPECT_EQ(a, b) << name;
    size_t same = 0;
    for (size_t i = 0; i < a.size(); ++i) same += a[i] == c[i];
    EXPECT_LT(same, 20u) << name;
  }
}

TEST(BenchDataset, U64BytesAreTheBigEndianU64Keys) {
  auto d = make_dataset("u64-bytes", 5, key_universe::dense);
  std::string buf;
  for (uint64_t id = 0; id < 100; ++id) {
    EXPECT_EQ(d->key(id, buf), std::string_view(pmindex::key_bytes(id + 1)));
    EXPECT_EQ(d->key_u64(id), id + 1);
  }
  EXPECT_TRUE(make_dataset("u64", 5)->integer_keys());
  EXPECT_FALSE(d->integer_keys());
}

TEST(BenchDataset, UnknownNameIsAUsageError) {
  try {
    make_dataset("nosuch", 1);
    FAIL();
  } catch (const error& e) {
    EXPECT_EQ(e.code(), errc::usage);
  }
}

TEST(BenchKeyGrammar, FeistelPermutesEveryRange) {
  for (uint64_t n : {1ull, 2ull, 3ull, 1000ull, 65537ull}) {
    feistel_perm p(n, 42);
    std::vector<bool> seen(n);
    for (uint64_t x = 0; x < n; ++x) {
      uint64_t y = p(x);
      ASSERT_LT(y, n);
      ASSERT_FALSE(seen[y]) << n;
      seen[y] = true;
    }
  }
}

// The word code: a run of letters made of words splits back into the same
// words (a word ends at the first consonant no vowel follows), whatever the
// field's size and salt; words of a field are distinct.
std::vector<std::string> split_words(const std::string& run) {
  auto vowel = [](char c) { return std::string_view("aeiou").find(c) != std::string_view::npos; };
  std::vector<std::string> out;
  size_t start = 0;
  for (size_t i = 0; i < run.size(); ++i)
    if (!vowel(run[i]) && i > start && (i + 1 == run.size() || !vowel(run[i + 1]))) {
      out.push_back(run.substr(start, i + 1 - start));
      start = i + 1;
    }
  return out;
}

TEST(BenchKeyGrammar, WordRunsSplitOneWayAndWordsAreDistinct) {
  for (uint64_t n : {3ull, 100ull, 200000ull}) {
    vocabulary_field f(n, n * 7);
    std::vector<std::string> w(n);
    for (uint64_t j = 0; j < n; ++j) f.append(j, w[j]);
    for (auto& x : w) ASSERT_LE(x.size(), f.max_len());
    rng r(n);
    for (int t = 0; t < 20000; ++t) {
      std::vector<std::string> pick;
      std::string run;
      for (uint64_t k = 0, m = 1 + r.below(4); k < m; ++k) {
        pick.push_back(w[r.below(n)]);
        run += pick.back();
      }
      ASSERT_EQ(split_words(run), pick) << run;
    }
    std::sort(w.begin(), w.end());
    EXPECT_EQ(std::unique(w.begin(), w.end()), w.end());
  }
}

// Templates whose renderings run together (a digit run split two ways)
// collide; the distinctness checks above would see it.
TEST(BenchKeyGrammar, OverlappingTemplatesCollideAndAreCaught) {
  grammar g(1000);
  g.add(0.5, {lit("x"), num(0, 100)});
  g.add(0.5, {lit("x1"), num(0, 10)});  // "x1" "5" is "x" "15": a bad grammar
  g.finish();
  std::vector<std::string> ks(g.size());
  for (uint64_t r = 0; r < g.size(); ++r) g.render(r, ks[r]);
  EXPECT_GT(duplicates(ks), 0u);
}

// ---------------------------------------------------------------- files

struct temp_file {
  std::string path;
  explicit temp_file(const std::string& suffix) {
    char t[] = "/dev/shm/pmindex-dataset-test.XXXXXX";
    int fd = mkstemp(t);
    ::close(fd);
    ::unlink(t);
    path = std::string(t) + suffix;
  }
  ~temp_file() { ::unlink(path.c_str()); }
  void write(const std::string& bytes) const { std::ofstream(path, std::ios::binary) << bytes; }
  void write_gz(const std::string& bytes) const {
    gzFile f = gzopen(path.c_str(), "wb");
    gzwrite(f, bytes.data(), static_cast<unsigned>(bytes.size()));
    gzclose(f);
  }
};

errc code_of(const std::string& spec) {
  try {
    make_dataset(spec, 1, key_universe::sparse, true);
  } catch (const error& e) {
    return e.code();
  }
  return errc::ok;
}

TEST(BenchDatasetFile, DeduplicatesSkipsEmptyLinesAndDropsCarriageReturns) {
  temp_file f(".txt");
  f.write("pear\r\napple\n\nfig\napple\npear\nkiwi");  // no newline at the end
  auto d = make_dataset("file:" + f.path, 1, key_universe::sparse, true);
  EXPECT_EQ(d->size(), 4u);
  EXPECT_EQ(d->max_key(), 5u);
  auto ks = keys_of(*d, first(4));
  std::sort(ks.begin(), ks.end());
  EXPECT_EQ(ks, (std::vector<std::string>{"apple", "fig", "kiwi", "pear"}));
}

TEST(BenchDatasetFile, GzipReadsTheSameKeysInTheSameOrder) {
  std::string text;
  for (int i = 0; i < 5000; ++i) text += "key" + std::to_string(i * 7919 % 5000) + "\n";
  temp_file plain(".txt"), gz(".txt.gz");
  plain.write(text);
  gz.write_gz(text);
  auto a = make_dataset("file:" + plain.path, 3, key_universe::sparse, true);
  auto b = make_dataset("file:" + gz.path, 3, key_universe::sparse, true);
  ASSERT_EQ(a->size(), 5000u);
  EXPECT_EQ(keys_of(*a, first(5000)), keys_of(*b, first(5000)));
  // Another seed, another order of the same keys.
  auto c = make_dataset("file:" + plain.path, 4, key_universe::sparse, true);
  EXPECT_NE(keys_of(*a, first(5000)), keys_of(*c, first(5000)));
}

TEST(BenchDatasetFile, BadFilesAreTypedErrors) {
  EXPECT_EQ(code_of("file:/nonexistent/keys.txt"), errc::missing_file);
  EXPECT_EQ(code_of("file:"), errc::usage);
  temp_file empty(".txt"), blank(".txt"), nul(".txt"), longline(".txt"), badgz(".gz");
  empty.write("");
  blank.write("\n\n\r\n");
  nul.write(std::string("abc\ndef\0ghi\n", 12));
  longline.write("short\n" + std::string(70000, 'x') + "\n");
  badgz.write(std::string("\x1f\x8b\x08\x00garbage that is not deflate data at all", 44));
  EXPECT_EQ(code_of("file:" + empty.path), errc::usage);
  EXPECT_EQ(code_of("file:" + blank.path), errc::usage);
  EXPECT_EQ(code_of("file:" + nul.path), errc::usage);
  EXPECT_EQ(code_of("file:" + longline.path), errc::usage);
  EXPECT_EQ(code_of("file:" + badgz.path), errc::usage);
  EXPECT_EQ(code_of("file:/dev/shm"), errc::usage);  // a directory
}

TEST(BenchDatasetFile, WordsIsTheDebianWordList) {
  if (::access(k_words_path, R_OK) != 0) GTEST_SKIP() << k_words_path << " missing (wamerican-insane)";
  auto d = make_dataset("words", 1, key_universe::sparse, true);
  EXPECT_GT(d->size(), 600000u);
  auto s = measure_keys(*d, 1, d->size(), 0);
  EXPECT_EQ(s.duplicates, 0u);
}

// ---------------------------------------------------------------- values

TEST(BenchValues, EveryVersionChecksAndOtherIdsDoNot) {
  std::string v;
  for (size_t size : {0u, 1u, 8u, 9u, 100u, 5000u}) {
    value_bytes(17, size, v);
    EXPECT_TRUE(value_matches(17, v));
    EXPECT_TRUE(value_check(17, v));
    for (uint64_t ver : {1ull, 2ull, 1ull << 40}) {
      value_bytes(17, ver, size, v);
      EXPECT_EQ(v.size(), size);
      EXPECT_TRUE(value_check(17, v)) << size << " v" << ver;
      if (size > 8) {
        EXPECT_FALSE(value_check(18, v)) << size;
        v.back() ^= 1;
        EXPECT_FALSE(value_check(17, v)) << size;
      }
    }
  }
}

}  // namespace
}  // namespace pmindex::bench

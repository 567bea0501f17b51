// DPTree's base-leaf fingerprints (src/hybrid/dptree/dptree.hpp,
// "FINGERPRINTS"): lookups and the presence checks of writes compare only
// the slots whose fingerprint matches, so keys that share one fingerprint
// in one leaf must still be told apart by their keys; check() recomputes
// every fingerprint (a merge that skips them fails it); a pool of the
// layout before fingerprints is refused with one clear line.
#include <gtest/gtest.h>

#include <map>
#include <string>
#include <vector>

#include "btree/detail/keys.hpp"
#include "index_fixture.hpp"
#include "oracle.hpp"
#include "pmindex/error.hpp"
#include "pmindex/index.hpp"

namespace pmindex {
namespace {

class DptreeFingerprints : public test::index_fixture {
 protected:
  DptreeFingerprints() : index_fixture("dptree") {}
  static constexpr uint8_t k_fp = 0x5a;

  // n u64 keys with the same fingerprint, ascending.
  static std::vector<uint64_t> colliding_u64(size_t n) {
    std::vector<uint64_t> v;
    for (uint64_t k = 1; v.size() < n; ++k)
      if (btree::detail::fingerprint(k) == k_fp) v.push_back(k);
    return v;
  }
  // n byte keys (as the u64 byte calls see them: key_bytes) or strings of
  // varying length with the same fingerprint.
  static std::vector<std::string> colliding_bytes(size_t n) {
    std::vector<std::string> v;
    for (uint64_t i = 0; v.size() < n; ++i) {
      std::string s = "user" + std::to_string(i * 7919);
      if (btree::detail::fingerprint(std::string_view(s)) == k_fp) v.push_back(s);
    }
    return v;
  }
};

// Every second key of a run of keys sharing one fingerprint is in the base
// (a close merges the buffer; 256-slot leaves hold them in a few leaves):
// each present key is found with its own value, each absent one is not,
// and inserts, updates and removes (whose presence checks read the base)
// answer as the oracle does. A lookup that took the first matching
// fingerprint without comparing keys fails here.
TEST_F(DptreeFingerprints, SharedFingerprintsToldApartByKeys) {
  {
    auto idx = open_idx("merge_min=64");
    const auto keys = colliding_u64(1200);
    std::map<uint64_t, uint64_t> ref;
    for (size_t i = 0; i < keys.size(); i += 2) {
      ASSERT_TRUE(idx->insert(keys[i], i));
      ref[keys[i]] = i;
    }
    idx->close();
    idx = reopen();
    ASSERT_EQ(extra(*idx, "buffer_records"), 0);
    ASSERT_GE(extra(*idx, "leaves"), 2);
    for (size_t i = 0; i < keys.size(); ++i) {
      auto got = idx->lookup(keys[i]);
      if (i % 2) {
        EXPECT_FALSE(got.has_value()) << "absent key " << keys[i];
      } else {
        ASSERT_TRUE(got.has_value()) << "key " << keys[i];
        EXPECT_EQ(*got, i);
      }
    }
    for (size_t i = 0; i < keys.size(); i += 3) {
      const bool had = ref.count(keys[i]) != 0;
      ASSERT_EQ(idx->insert(keys[i], 7), !had);
      if (!had) ref[keys[i]] = 7;
      ASSERT_TRUE(idx->update(keys[i], i + 1));
      ref[keys[i]] = i + 1;
    }
    for (size_t i = 1; i < keys.size(); i += 4) {
      ASSERT_EQ(idx->remove(keys[i]), ref.erase(keys[i]) == 1);
    }
    expect_same(*idx, ref, "u64, after writes");
    idx->close();
    idx = reopen();
    expect_same(*idx, ref, "u64, merged");
  }
  {
    auto idx = open_idx("keys=bytes,merge_min=64");
    const auto keys = colliding_bytes(900);
    std::map<std::string, std::string> ref;
    for (size_t i = 0; i < keys.size(); i += 2) {
      ASSERT_TRUE(idx->insert(keys[i], keys[i] + "/v"));
      ref[keys[i]] = keys[i] + "/v";
    }
    idx->close();
    idx = reopen();
    ASSERT_EQ(extra(*idx, "buffer_records"), 0);
    std::string got;
    for (size_t i = 0; i < keys.size(); ++i) {
      if (i % 2) {
        EXPECT_FALSE(idx->lookup(keys[i], &got)) << "absent key " << keys[i];
      } else {
        ASSERT_TRUE(idx->lookup(keys[i], &got)) << "key " << keys[i];
        EXPECT_EQ(got, keys[i] + "/v");
      }
    }
    for (size_t i = 1; i + 1 < keys.size(); i += 3) {
      ASSERT_EQ(idx->remove(keys[i]), ref.erase(keys[i]) == 1);
      const std::string& u = keys[i + 1];
      const bool had = ref.count(u) != 0;
      ASSERT_EQ(idx->update(u, "u"), had);
      ASSERT_EQ(idx->insert(u, "n"), !had);
      ref[u] = had ? "u" : "n";
    }
    expect_same(*idx, ref, "bytes, after writes");
    idx->close();
    idx = reopen();
    expect_same(*idx, ref, "bytes, merged");
  }
}

// check() recomputes the fingerprint of every used slot: a merge that
// writes records without their fingerprints (mutant fingerprint_skipped)
// fails it, with the slot named; the same history without the mutant
// passes. (The crash checker's mutant tests catch it too, and
// fingerprint_unflushed, which only a crash shows.)
TEST_F(DptreeFingerprints, CheckRecomputesEveryFingerprint) {
  for (const char* keys : {"", "keys=bytes,"}) {
    SCOPED_TRACE(keys);
    for (bool mutant : {false, true}) {
      auto idx = open_idx(std::string(keys) + "leaf=16,merge_min=8" + (mutant ? ",mutant=fingerprint_skipped" : ""));
      for (uint64_t k = 0; k < 200; ++k) ASSERT_TRUE(idx->insert(k * 11, k));
      idx->close();  // every record merged into the base
      idx = reopen();
      auto c = idx->check();
      if (mutant) {
        EXPECT_FALSE(c.ok);
        EXPECT_NE(c.message.find("wrong fingerprint"), std::string::npos) << c.message;
      } else {
        EXPECT_TRUE(c.ok) << c.message;
      }
    }
  }
}

// A pool of the leaf layout before fingerprints, or of the one log per
// buffer before the striped logs (its root's magic), gets
// errc::bad_version (exit code 5) and a line that says what to do, not
// "corrupt" or a wrong answer.
TEST_F(DptreeFingerprints, OldLayoutRefusedWithClearError) {
  for (const char* keys : {"", "keys=bytes"}) {
    SCOPED_TRACE(keys);
    auto idx = open_idx(keys);
    ASSERT_TRUE(idx->insert(1, 1));
    const bool bytes = *keys != 0;
    expect_old_layout_refused(idx, bytes ? 0x7365747942505444ull : 0x3436755f42505444ull);  // "DTPBytes" / "DTPB_u64"
    // And the layout with one log per buffer (before the striped logs).
    idx = open_idx(keys);
    ASSERT_TRUE(idx->insert(1, 1));
    expect_old_layout_refused(idx, bytes ? 0x7374796232505444ull : 0x3436755f32505444ull);  // "DTP2byts" / "DTP2_u64"
  }
}

}  // namespace
}  // namespace pmindex

// The pool stores its persistence mode (format 3). An open that names no
// mode uses the one the pool was created in; persist, eadr and volatile may
// be switched (the open report says so); tx and the other modes never mix
// (errc::wrong_mode, exit code 14); a pool left dirty by a volatile open is
// refused as not crash-consistent (errc::corrupt, exit code 11). Every
// refusal leaves the pool exactly as it was.
#include <fcntl.h>
#include <unistd.h>

#include <fstream>
#include <optional>

#include "pmindex/error.hpp"
#include "pmindex/index.hpp"
#include "pmindex/pm/counters.hpp"
#include "pmindex/pm/pool.hpp"
#include "substrate_util.hpp"

namespace pmindex::pool_mode_test {
namespace {

using test::run_pmindex;
using test::temp_pool;

options canary(const std::string& path, std::optional<pm::mode> m) {
  options o;
  o.index = "canary";
  o.pool_path = path;
  o.pool_size = 8 << 20;
  o.mode = m;
  o.quiet = true;
  return o;
}

pm::detail::pool_header header_of(const std::string& path) {
  pm::detail::pool_header h{};
  std::ifstream(path, std::ios::binary).read(reinterpret_cast<char*>(&h), sizeof h);
  return h;
}

// The error an open throws (errc::ok if none), and its message.
errc open_error(const options& o, std::string* what = nullptr) {
  try {
    open(o)->close();
  } catch (const error& e) {
    if (what) *what = e.what();
    return e.code();
  }
  return errc::ok;
}

// A pool-level open (no index: tx pools need one that supports tx).
std::unique_ptr<pm::pool> raw(const std::string& path, std::optional<pm::mode> m) {
  pm::pool_options po;
  po.path = path;
  po.size = 2 << 20;
  po.pm_mode = m;
  po.index_name = "canary";
  po.quiet = true;
  return pm::pool::open(po);
}

// Regression: a pool reopened without a mode ran in persist,
// whatever it was created in. The mode shows in what the open does: eadr
// fences without flushing, volatile does neither.
TEST(PoolMode, ReopenWithoutAModeUsesTheStoredOne) {
  for (pm::mode m : {pm::mode::volatile_, pm::mode::persist, pm::mode::eadr}) {
    SCOPED_TRACE(std::string(pm::to_string(m)));
    temp_pool tp("stored");
    {
      auto idx = open(canary(tp.path(), m));
      for (uint64_t k = 0; k < 100; ++k) ASSERT_TRUE(idx->insert(k, k + 1));
      idx->close();
    }
    EXPECT_EQ(header_of(tp.path()).create_mode, static_cast<uint64_t>(m));
    auto idx = open(canary(tp.path(), std::nullopt));
    EXPECT_EQ(idx->pool().pm_mode(), m);
    EXPECT_EQ(idx->report().mode, m);
    EXPECT_EQ(idx->report().pool_mode, m);
    EXPECT_EQ(idx->report().note, "");
    auto before = pm::thread_counters();
    for (uint64_t k = 100; k < 150; ++k) ASSERT_TRUE(idx->insert(k, k + 1));
    auto d = pm::thread_counters() - before;
    EXPECT_EQ(d.lines_flushed > 0, m == pm::mode::persist) << d.lines_flushed;
    EXPECT_EQ(d.fences > 0, m != pm::mode::volatile_) << d.fences;
    for (uint64_t k = 0; k < 150; ++k) ASSERT_EQ(idx->lookup(k), k + 1);
  }
}

// The command line: load in eadr, then verify and info name no mode.
TEST(PoolMode, CommandLineReopensInTheStoredMode) {
  temp_pool tp("cli");
  ASSERT_EQ(run_pmindex({"load", "--index", "canary", "--pool", tp.path(), "--pool-size", "8M", "--mode",
                         "eadr", "--keys", "300"}),
            0);
  std::string err, out;
  EXPECT_EQ(run_pmindex({"verify", "--pool", tp.path(), "--keys", "300"}, &err, 2), 0);
  EXPECT_NE(err.find("(canary, eadr mode): clean"), std::string::npos) << err;
  EXPECT_EQ(run_pmindex({"info", "--pool", tp.path(), "--json"}, &out), 0);
  EXPECT_NE(out.find("\"mode\":\"eadr\""), std::string::npos) << out;
  EXPECT_EQ(run_pmindex({"verify", "--pool", tp.path(), "--keys", "300", "--mode", "persist"}, &err, 2), 0);
  EXPECT_NE(err.find("pool created in eadr mode, opened in persist mode"), std::string::npos) << err;
  EXPECT_EQ(run_pmindex({"info", "--pool", tp.path()}, &out), 0);
  EXPECT_NE(out.find("mode      eadr (last opened in persist mode)"), std::string::npos) << out;
}

// A damaged creation time (the header's word at 88, which no check
// covers) that gmtime cannot represent: `info` crashed in strftime
// (found by damagetest --index permart); it prints the number instead.
TEST(PoolMode, InfoSurvivesACreationTimeNoCalendarHolds) {
  temp_pool tp("ctime");
  ASSERT_EQ(run_pmindex({"load", "--index", "canary", "--pool", tp.path(), "--pool-size", "8M", "--keys", "10"}), 0);
  const uint64_t bad = uint64_t{1} << 62;
  int fd = ::open(tp.path().c_str(), O_RDWR);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(pwrite(fd, &bad, 8, 88), 8);
  ::close(fd);
  std::string out;
  EXPECT_EQ(run_pmindex({"info", "--pool", tp.path()}, &out), 0);
  EXPECT_NE(out.find("not a time: 4611686018427387904"), std::string::npos) << out;
}

// persist, eadr and volatile share a layout: switching is allowed and
// noted; the pool keeps the mode it was created in.
TEST(PoolMode, SwitchingIsNotedAndDoesNotChangeThePoolsMode) {
  temp_pool tp("switch");
  {
    auto idx = open(canary(tp.path(), pm::mode::eadr));
    ASSERT_TRUE(idx->insert(1, 2));
    idx->close();
  }
  {
    auto idx = open(canary(tp.path(), pm::mode::persist));
    EXPECT_EQ(idx->pool().pm_mode(), pm::mode::persist);
    EXPECT_EQ(idx->report().pool_mode, pm::mode::eadr);
    EXPECT_EQ(idx->report().note, "pool created in eadr mode, opened in persist mode");
    EXPECT_EQ(header_of(tp.path()).last_mode, static_cast<uint64_t>(pm::mode::persist));
    idx->abandon();  // a crash in persist mode recovers, whatever the pool's mode
  }
  auto idx = open(canary(tp.path(), std::nullopt));
  EXPECT_FALSE(idx->report().was_clean);
  EXPECT_EQ(idx->pool().pm_mode(), pm::mode::eadr);
  EXPECT_EQ(idx->lookup(1), 2u);
  EXPECT_EQ(header_of(tp.path()).create_mode, static_cast<uint64_t>(pm::mode::eadr));
}

// A tx pool's changes are undo-logged: only a tx open may touch it, and a
// tx open never takes a pool made without the log.
TEST(PoolMode, TxAndOtherModesNeverMix) {
  temp_pool tp("tx");
  raw(tp.path(), pm::mode::tx)->close();
  const auto before = header_of(tp.path());
  for (pm::mode m : {pm::mode::persist, pm::mode::eadr, pm::mode::volatile_}) {
    try {
      raw(tp.path(), m);
      ADD_FAILURE() << "a tx pool opened in " << pm::to_string(m);
    } catch (const error& e) {
      EXPECT_EQ(e.code(), errc::wrong_mode) << e.what();
      EXPECT_NE(std::string(e.what()).find("created in tx mode and cannot be opened in"), std::string::npos);
    }
  }
  EXPECT_EQ(raw(tp.path(), std::nullopt)->pm_mode(), pm::mode::tx);  // then closed cleanly
  auto after = header_of(tp.path());
  EXPECT_EQ(after.clean, 1u);
  EXPECT_EQ(after.open_count, before.open_count + 1);  // only the tx open counted
  // An index without tx is refused the pool, which stays as it was.
  EXPECT_EQ(open_error(canary(tp.path(), std::nullopt)), errc::unsupported);
  EXPECT_EQ(run_pmindex({"verify", "--pool", tp.path()}), 12);
  EXPECT_EQ(run_pmindex({"verify", "--pool", tp.path(), "--mode", "persist"}), 14);
  EXPECT_EQ(header_of(tp.path()).open_count, after.open_count);
  EXPECT_EQ(header_of(tp.path()).clean, 1u);

  temp_pool tp2("notx");
  raw(tp2.path(), pm::mode::persist)->close();
  try {
    raw(tp2.path(), pm::mode::tx);
    ADD_FAILURE() << "a persist pool opened in tx mode";
  } catch (const error& e) {
    EXPECT_EQ(e.code(), errc::wrong_mode) << e.what();
  }
}

// A volatile open flushes nothing, so after a crash its pool holds any mix
// of old and new lines: refused in every mode, and left as it was.
TEST(PoolMode, PoolLeftDirtyByAVolatileOpenIsRefused) {
  for (pm::mode created : {pm::mode::volatile_, pm::mode::persist}) {
    SCOPED_TRACE(std::string(pm::to_string(created)));
    temp_pool tp("dirtyvol");
    {
      auto idx = open(canary(tp.path(), created));
      ASSERT_TRUE(idx->insert(1, 2));
      idx->close();
    }
    {
      auto idx = open(canary(tp.path(), pm::mode::volatile_));
      ASSERT_TRUE(idx->insert(3, 4));
      idx->abandon();
    }
    const auto before = header_of(tp.path());
    EXPECT_EQ(before.clean, 0u);
    EXPECT_EQ(before.last_mode, static_cast<uint64_t>(pm::mode::volatile_));
    for (auto m :
         {std::optional<pm::mode>(), std::optional(pm::mode::persist), std::optional(pm::mode::volatile_)}) {
      std::string what;
      EXPECT_EQ(open_error(canary(tp.path(), m), &what), errc::corrupt);
      EXPECT_NE(what.find("in use in volatile mode and not closed cleanly"), std::string::npos) << what;
      EXPECT_EQ(what.find('\n'), std::string::npos);
    }
    EXPECT_EQ(run_pmindex({"verify", "--pool", tp.path()}), 11);
    EXPECT_EQ(run_pmindex({"info", "--pool", tp.path()}), 0);  // inspection still works
    EXPECT_EQ(header_of(tp.path()).open_count, before.open_count);
  }
}

// A volatile pool closed cleanly reopens with its records; a dirty persist
// pool may be recovered in volatile mode (then it is volatile's to lose).
TEST(PoolMode, VolatileCleanCloseAndVolatileRecovery) {
  temp_pool tp("volclean");
  {
    auto idx = open(canary(tp.path(), pm::mode::volatile_));
    for (uint64_t k = 0; k < 500; ++k) ASSERT_TRUE(idx->insert(k, k * 3));
    idx->close();
  }
  {
    auto idx = open(canary(tp.path(), std::nullopt));
    EXPECT_TRUE(idx->report().was_clean);
    EXPECT_EQ(idx->pool().pm_mode(), pm::mode::volatile_);
    for (uint64_t k = 0; k < 500; ++k) ASSERT_EQ(idx->lookup(k), k * 3);
    idx->close();
  }
  {
    auto idx = open(canary(tp.path(), pm::mode::persist));
    ASSERT_TRUE(idx->insert(1000, 1));
    idx->abandon();
  }
  auto idx = open(canary(tp.path(), pm::mode::volatile_));
  EXPECT_FALSE(idx->report().was_clean);
  EXPECT_EQ(idx->lookup(1000), 1u);
  EXPECT_TRUE(idx->check().ok);
}

}  // namespace
}  // namespace pmindex::pool_mode_test

// Pool tests: create, clean reopen, reopen in a second process at another
// address, and every bad-input case with its error code (in process) and
// exit code (the `pmindex` binary).
#include <sys/mman.h>
#include <csignal>
#include <sys/wait.h>
#include <unistd.h>

#include <cstring>
#include <fstream>
#include <map>

#include "pmindex/error.hpp"
#include "pmindex/index.hpp"
#include "pmindex/pm/pool.hpp"
#include "substrate_util.hpp"

namespace pmindex {
namespace {

using test::run_pmindex;
using test::temp_pool;

options canary_opts(const std::string& path, uint64_t size = 16 << 20) {
  options o;
  o.index = "canary";
  o.pool_path = path;
  o.pool_size = size;
  o.mode = pm::mode::persist;
  o.quiet = true;
  return o;
}

errc open_error(const options& o) {
  try {
    auto idx = open(o);
  } catch (const error& e) {
    return e.code();
  }
  return errc::ok;
}

uint64_t key_of(uint64_t i) { return i * 7919 + 13; }

// Reads and patches the pool header through the file.
pm::detail::pool_header read_header(const std::string& path) {
  pm::detail::pool_header h{};
  std::ifstream f(path, std::ios::binary);
  f.read(reinterpret_cast<char*>(&h), sizeof h);
  return h;
}
void write_header(const std::string& path, const pm::detail::pool_header& h) {
  std::fstream f(path, std::ios::binary | std::ios::in | std::ios::out);
  f.write(reinterpret_cast<const char*>(&h), sizeof h);
}

TEST(Pool, CreateAndCleanReopen) {
  temp_pool tp("create");
  {
    auto idx = open(canary_opts(tp.path()));
    EXPECT_TRUE(idx->report().created);
    for (uint64_t i = 0; i < 2000; ++i) ASSERT_TRUE(idx->insert(key_of(i), i));
    idx->close();
  }
  auto h = read_header(tp.path());
  EXPECT_EQ(h.clean, 1u);
  EXPECT_EQ(h.open_count, 1u);
  EXPECT_STREQ(h.index_name, "canary");
  auto idx = open(canary_opts(tp.path()));
  EXPECT_FALSE(idx->report().created);
  EXPECT_TRUE(idx->report().was_clean);
  EXPECT_EQ(idx->report().traced_blocks, 0u);
  for (uint64_t i = 0; i < 2000; ++i) ASSERT_EQ(idx->lookup(key_of(i)), i);
  EXPECT_TRUE(idx->check().ok);
  EXPECT_EQ(idx->stats().records, 2000u);
  EXPECT_EQ(read_header(tp.path()).clean, 0u);  // in use
}

TEST(Pool, DirtyReopenRecovers) {
  temp_pool tp("dirty");
  {
    auto idx = open(canary_opts(tp.path()));
    for (uint64_t i = 0; i < 500; ++i) ASSERT_TRUE(idx->insert(key_of(i), i));
    idx->abandon();
  }
  auto idx = open(canary_opts(tp.path()));
  EXPECT_FALSE(idx->report().was_clean);
  EXPECT_EQ(idx->report().traced_blocks, 501u);  // root + one block per key
  for (uint64_t i = 0; i < 500; ++i) ASSERT_EQ(idx->lookup(key_of(i)), i);
  EXPECT_TRUE(idx->check().ok);
}

// The child maps a reservation where the parent had the pool, so the pool
// must land elsewhere; every stored offset must still resolve.
TEST(Pool, ReopenInSecondProcessAtDifferentAddress) {
  temp_pool tp("twoproc");
  const uint64_t size = 16 << 20, n = 3000;
  uintptr_t parent_base;
  {
    auto idx = open(canary_opts(tp.path(), size));
    parent_base = reinterpret_cast<uintptr_t>(idx->pool().base());
    for (uint64_t i = 0; i < n; ++i) ASSERT_TRUE(idx->insert(key_of(i), i + 1));
    idx->close();
  }
  pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    void* r = mmap(reinterpret_cast<void*>(parent_base), size, PROT_NONE,
                   MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
    if (r != reinterpret_cast<void*>(parent_base)) _exit(20);
    int rc = 0;
    try {
      auto idx = open(canary_opts(tp.path(), size));
      if (reinterpret_cast<uintptr_t>(idx->pool().base()) == parent_base) _exit(21);
      if (!idx->report().was_clean) rc = 22;
      for (uint64_t i = 0; i < n && !rc; ++i)
        if (idx->lookup(key_of(i)) != i + 1) rc = 23;
      std::vector<record> all;
      idx->range(0, UINT64_MAX, all);
      if (all.size() != n) rc = 24;
      for (size_t i = 1; i < all.size(); ++i)
        if (all[i - 1].key >= all[i].key) rc = 25;
      if (!idx->check().ok) rc = 26;
      for (uint64_t i = n; i < 2 * n && !rc; ++i)
        if (!idx->insert(key_of(i), i + 1)) rc = 27;
      idx->close();
    } catch (...) {
      rc = 28;
    }
    _exit(rc);
  }
  int status = 0;
  waitpid(pid, &status, 0);
  ASSERT_TRUE(WIFEXITED(status));
  ASSERT_EQ(WEXITSTATUS(status), 0) << "child failed (20: reservation, 21: same address, 22+: data)";
  auto idx = open(canary_opts(tp.path(), size));
  EXPECT_TRUE(idx->report().was_clean);
  for (uint64_t i = 0; i < 2 * n; ++i) ASSERT_EQ(idx->lookup(key_of(i)), i + 1);
  EXPECT_TRUE(idx->check().ok);
}

// A separate program (fork + exec, its own ASLR layout) loads, this process
// reads, adds, and the program verifies, also after a crash-like abandon.
TEST(Pool, ReopenAcrossExecOfPmindex) {
  temp_pool tp("exec");
  ASSERT_EQ(run_pmindex({"load", "--pool", tp.path(), "--pool-size", "32M", "--keys", "5000", "--seed", "7"}), 0);
  {
    auto idx = open(canary_opts(tp.path()));
    EXPECT_TRUE(idx->report().was_clean);
    std::vector<record> all;
    idx->range(0, UINT64_MAX, all);
    EXPECT_EQ(all.size(), 5000u);
    EXPECT_TRUE(idx->check().ok);
    for (uint64_t i = 0; i < 100; ++i) idx->insert(i, i);  // tiny keys, not in the sequence
    idx->abandon();
  }
  std::string out;
  EXPECT_EQ(run_pmindex({"verify", "--pool", tp.path(), "--keys", "5000", "--seed", "7"}, &out), 0) << out;
  EXPECT_NE(out.find("0 missing, 0 wrong"), std::string::npos) << out;
  auto idx = open(canary_opts(tp.path()));
  for (uint64_t i = 0; i < 100; ++i) EXPECT_EQ(idx->lookup(i), i);
}

TEST(PoolErrors, MissingFile) {
  temp_pool tp("missing");
  auto o = canary_opts(tp.path());
  o.open = pm::open_mode::must_exist;
  EXPECT_EQ(open_error(o), errc::missing_file);
  EXPECT_NE(access(tp.path().c_str(), F_OK), 0);  // not created
  EXPECT_EQ(run_pmindex({"verify", "--pool", tp.path(), "--keys", "1"}), 3);
  EXPECT_EQ(run_pmindex({"info", "--pool", tp.path()}), 3);
}

TEST(PoolErrors, MustCreateRefusesExisting) {
  temp_pool tp("mustcreate");
  open(canary_opts(tp.path()))->close();
  auto o = canary_opts(tp.path());
  o.open = pm::open_mode::must_create;
  EXPECT_EQ(open_error(o), errc::io);
}

TEST(PoolErrors, WrongMagic) {
  temp_pool tp("magic");
  {
    std::ofstream f(tp.path(), std::ios::binary);
    std::string junk(2 << 20, 'x');
    f.write(junk.data(), static_cast<std::streamsize>(junk.size()));
  }
  EXPECT_EQ(open_error(canary_opts(tp.path())), errc::not_a_pool);
  EXPECT_EQ(run_pmindex({"info", "--pool", tp.path()}), 4);
  EXPECT_EQ(run_pmindex({"load", "--pool", tp.path(), "--keys", "1"}), 4);
  // Never reinitialised: the junk is still there.
  EXPECT_EQ(read_header(tp.path()).magic[0], 'x');
}

TEST(PoolErrors, TinyFileIsNotAPool) {
  temp_pool tp("tiny");
  { std::ofstream(tp.path()) << "hello"; }
  EXPECT_EQ(open_error(canary_opts(tp.path())), errc::not_a_pool);
  EXPECT_EQ(run_pmindex({"verify", "--pool", tp.path()}), 4);
}

TEST(PoolErrors, OtherFormatVersion) {
  temp_pool tp("version");
  open(canary_opts(tp.path()))->close();
  auto h = read_header(tp.path());
  h.format_version = pm::detail::k_format_version + 1;
  write_header(tp.path(), h);
  EXPECT_EQ(open_error(canary_opts(tp.path())), errc::bad_version);
  EXPECT_EQ(run_pmindex({"verify", "--pool", tp.path()}), 5);
  EXPECT_EQ(run_pmindex({"load", "--pool", tp.path(), "--keys", "1"}), 5);
}

// Regression: opening with the wrong index used to mark the pool in use
// (clean = 0) before the index check, so the next correct open recovered.
TEST(PoolErrors, PoolOfAnotherIndexStaysClean) {
  temp_pool tp("wrongindex");
  {
    auto idx = open(canary_opts(tp.path()));
    idx->insert(1, 2);
    idx->close();
  }
  auto before = read_header(tp.path());
  index_entry other = *find_index("canary");
  other.name = "c_test_other_index";
  register_index(other);
  auto o = canary_opts(tp.path());
  o.index = "c_test_other_index";
  EXPECT_EQ(open_error(o), errc::wrong_index);
  auto after = read_header(tp.path());
  EXPECT_EQ(after.clean, 1u);
  EXPECT_EQ(after.open_count, before.open_count);
  auto h = before;
  std::snprintf(h.index_name, sizeof h.index_name, "no_such_index");
  h.header_sum = pm::detail::header_checksum(h);  // a pool made for another index, not a damaged one
  write_header(tp.path(), h);
  EXPECT_EQ(run_pmindex({"load", "--index", "canary", "--pool", tp.path(), "--keys", "1"}), 6);
  write_header(tp.path(), before);
  auto idx = open(canary_opts(tp.path()));
  EXPECT_TRUE(idx->report().was_clean);
  EXPECT_EQ(idx->lookup(1), 2u);
}

TEST(PoolErrors, TooSmallAndTruncated) {
  temp_pool tp("small");
  EXPECT_EQ(open_error(canary_opts(tp.path(), 4096)), errc::too_small);
  EXPECT_NE(access(tp.path().c_str(), F_OK), 0);  // nothing left behind
  EXPECT_NE(access((tp.path() + ".creating." + std::to_string(getpid())).c_str(), F_OK), 0);
  EXPECT_EQ(run_pmindex({"load", "--pool", tp.path(), "--pool-size", "100K", "--keys", "1"}), 7);
  open(canary_opts(tp.path(), 8 << 20))->close();
  ASSERT_EQ(truncate(tp.path().c_str(), 4 << 20), 0);
  EXPECT_EQ(open_error(canary_opts(tp.path())), errc::too_small);
  EXPECT_EQ(run_pmindex({"verify", "--pool", tp.path()}), 7);
}

TEST(PoolErrors, CorruptHeader) {
  temp_pool tp("corrupt");
  open(canary_opts(tp.path()))->close();
  auto h = read_header(tp.path());
  h.nchunks *= 4;
  write_header(tp.path(), h);
  EXPECT_EQ(open_error(canary_opts(tp.path())), errc::corrupt);
  EXPECT_EQ(run_pmindex({"verify", "--pool", tp.path()}), 11);
}

// Format 2 sums the header's creation words: a flipped bit anywhere in them
// is refused as corrupt -- also the header of a pool left dirty, where
// `info` once crashed on a flipped nchunks whose product overflowed.
TEST(PoolErrors, HeaderChecksumCatchesEveryFlippedBit) {
  temp_pool tp("headersum");
  {
    auto idx = open(canary_opts(tp.path()));
    idx->insert(1, 2);
    idx->abandon();  // dirty: info reads the header without the allocator state
  }
  const auto good = read_header(tp.path());
  ASSERT_EQ(good.header_sum, pm::detail::header_checksum(good));
  int checked = 0;
  for (size_t byte : {16, 24, 32, 40, 48, 56, 63, 130, 200, 447, 448, 455, 460, 511})
    for (int bit : {0, 5, 7}) {
      auto h = good;
      reinterpret_cast<char*>(&h)[byte] ^= static_cast<char>(1 << bit);
      write_header(tp.path(), h);
      EXPECT_EQ(run_pmindex({"info", "--pool", tp.path()}), 11) << byte << ":" << bit;
      EXPECT_EQ(open_error(canary_opts(tp.path())), errc::corrupt) << byte << ":" << bit;
      ++checked;
    }
  EXPECT_EQ(checked, 42);
  // The words that change in use are range-checked instead.
  auto h = good;
  h.root = h.pool_size + 64;
  write_header(tp.path(), h);
  EXPECT_EQ(run_pmindex({"info", "--pool", tp.path()}), 11);
  h = good;
  h.last_mode = 5;  // no such mode
  write_header(tp.path(), h);
  EXPECT_EQ(run_pmindex({"info", "--pool", tp.path()}), 11);
  h = good;
  h.clean = 0x100;
  write_header(tp.path(), h);
  EXPECT_EQ(run_pmindex({"verify", "--pool", tp.path()}), 11);
  write_header(tp.path(), good);
  EXPECT_EQ(run_pmindex({"verify", "--pool", tp.path()}), 0);
}

// Pools of the previous formats (1: no checksums; 2: no stored mode) get
// one clear line and exit code 5.
TEST(PoolErrors, OlderFormatPoolsAreRefusedClearly) {
  for (uint32_t version : {1u, 2u}) {
    temp_pool tp("format" + std::to_string(version));
    open(canary_opts(tp.path()))->close();
    auto h = read_header(tp.path());
    h.format_version = version;
    write_header(tp.path(), h);
    try {
      open(canary_opts(tp.path()));
      ADD_FAILURE() << "opened a format " << version << " pool";
    } catch (const error& e) {
      EXPECT_EQ(e.code(), errc::bad_version);
      EXPECT_NE(std::string(e.what()).find("format version " + std::to_string(version) +
                                           "; this pmindex reads version 3"),
                std::string::npos)
          << e.what();
      EXPECT_EQ(std::string(e.what()).find('\n'), std::string::npos);
    }
    std::string err;
    EXPECT_EQ(run_pmindex({"verify", "--pool", tp.path()}, &err, 2), 5);
    EXPECT_NE(err.find("(recreate the pool with this version)"), std::string::npos) << err;
  }
}

// The allocator state a clean close wrote is summed too: damage there is
// refused rather than handed to the allocator.
TEST(PoolErrors, DamagedAllocatorStateIsCorrupt) {
  temp_pool tp("metasum");
  {
    auto idx = open(canary_opts(tp.path()));
    for (uint64_t i = 0; i < 1000; ++i) idx->insert(key_of(i), i);
    idx->close();
  }
  const auto h = read_header(tp.path());
  {
    std::fstream f(tp.path(), std::ios::binary | std::ios::in | std::ios::out);
    f.seekp(static_cast<std::streamoff>(h.meta_offset + 2));
    f.put('\x7f');
  }
  EXPECT_EQ(open_error(canary_opts(tp.path())), errc::corrupt);
  EXPECT_EQ(run_pmindex({"verify", "--pool", tp.path()}), 11);
}

// A full pool fails the insert; everything stored stays readable, after a
// clean reopen and after a dirty one. (A later insert may still succeed when
// its node falls in a size class with room left, so fill until 200 inserts
// in a row fail.)
TEST(PoolErrors, PoolFullKeepsEverything) {
  temp_pool tp("full");
  auto o = canary_opts(tp.path(), 1 << 20);
  std::map<uint64_t, uint64_t> ref;
  uint64_t next = 1000000;  // keys never tried before
  auto fill = [&](index& idx) {
    int fails = 0;
    for (uint64_t i = 0; fails < 200; ++i) {
      uint64_t k = key_of(next++);
      try {
        ASSERT_TRUE(idx.insert(k, i));
        ref[k] = i;
        fails = 0;
      } catch (const error& e) {
        ASSERT_EQ(e.code(), errc::pool_full);
        ASSERT_FALSE(idx.lookup(k));  // a failed insert leaves no trace
        ++fails;
      }
    }
  };
  auto all_there = [&](index& idx) {
    for (auto& [k, v] : ref) ASSERT_EQ(idx.lookup(k), v);
    std::vector<record> all;
    idx.range(0, UINT64_MAX, all);
    ASSERT_EQ(all.size(), ref.size());
    auto c = idx.check();
    ASSERT_TRUE(c.ok) << c.message;
  };
  {
    auto idx = open(o);
    fill(*idx);
    EXPECT_GT(ref.size(), 1000u);
    all_there(*idx);
    EXPECT_EQ(idx->stats().records, ref.size());
    idx->close();
  }
  {
    auto idx = open(o);
    EXPECT_TRUE(idx->report().was_clean);
    all_there(*idx);
    fill(*idx);
    all_there(*idx);
    idx->abandon();
  }
  auto idx = open(o);
  EXPECT_FALSE(idx->report().was_clean);
  all_there(*idx);
  fill(*idx);
  // Removing makes room again.
  for (int i = 0; i < 100; ++i) {
    ASSERT_TRUE(idx->remove(ref.begin()->first));
    ref.erase(ref.begin());
  }
  idx->pool().quiesce();
  EXPECT_TRUE(idx->insert(1, 1));
  ref[1] = 1;
  all_there(*idx);
}

TEST(PoolErrors, PoolFullFromTheCommandLine) {
  temp_pool tp("fullcli");
  std::string out;
  EXPECT_EQ(run_pmindex({"load", "--pool", tp.path(), "--pool-size", "1M", "--keys", "1000000", "--ack-every", "1"},
                        &out),
            8);
  auto pos = out.rfind("acked ");
  ASSERT_NE(pos, std::string::npos);
  std::string acked = out.substr(pos + 6, out.find('\n', pos) - pos - 6);
  EXPECT_GT(std::stoull(acked), 1000u);
  EXPECT_EQ(run_pmindex({"verify", "--pool", tp.path(), "--keys", acked}), 0);
}

TEST(PoolErrors, UnknownOptionVerbAndValue) {
  temp_pool tp("usage");
  EXPECT_EQ(run_pmindex({"load", "--pool", tp.path(), "--keys", "1", "--bogus", "1"}), 2);
  EXPECT_EQ(run_pmindex({"no-such-verb"}), 2);
  EXPECT_EQ(run_pmindex({"load", "--pool", tp.path(), "--mode", "bogus"}), 2);
  EXPECT_EQ(run_pmindex({"load", "--pool", tp.path(), "--flush", "bogus"}), 2);
  EXPECT_EQ(run_pmindex({"load", "--pool", tp.path(), "--keys", "12x"}), 2);
  EXPECT_EQ(run_pmindex({"load", "--index", "no_such_index", "--pool", tp.path()}), 2);
  EXPECT_NE(access(tp.path().c_str(), F_OK), 0);  // nothing created by a bad command
}

TEST(PoolErrors, InUseByAnotherProcess) {
  temp_pool tp("inuse");
  auto idx = open(canary_opts(tp.path()));
  idx->insert(5, 6);
  auto before = read_header(tp.path());
  EXPECT_EQ(run_pmindex({"verify", "--pool", tp.path()}), 10);
  EXPECT_EQ(run_pmindex({"load", "--pool", tp.path(), "--keys", "1"}), 10);
  EXPECT_EQ(open_error(canary_opts(tp.path())), errc::io);
  EXPECT_EQ(read_header(tp.path()).open_count, before.open_count);
  EXPECT_EQ(idx->lookup(5), 6u);
}

// A process killed while creating a pool leaves no pool at the path (it is
// built under a temporary name), so the next open simply creates it.
TEST(Pool, KilledDuringCreationLeavesNoPool) {
  temp_pool tp("killcreate");
  pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    try {
      auto idx = open(canary_opts(tp.path(), uint64_t{1} << 30));  // fallocate takes a while
      pause();
    } catch (...) {
    }
    _exit(0);
  }
  usleep(20000);
  kill(pid, SIGKILL);
  waitpid(pid, nullptr, 0);
  std::string temp = tp.path() + ".creating." + std::to_string(pid);
  ::unlink(temp.c_str());
  // Either no pool (the usual case) or, if the child got that far, a whole
  // one: both open without error.
  auto idx = open(canary_opts(tp.path()));
  EXPECT_TRUE(idx->insert(1, 1));
}

// Regression: a dirty pool whose index never set its root (a crash during
// creation) could never be opened again ("no valid root").
TEST(Pool, CrashBeforeRootIsCreatedAnew) {
  temp_pool tp("noroot");
  pm::pool_options po;
  po.path = tp.path();
  po.size = 4 << 20;
  po.index_name = "canary";
  po.quiet = true;
  pm::pool::open(po)->abandon();  // formatted, marked in use, root 0
  auto idx = open(canary_opts(tp.path()));
  EXPECT_TRUE(idx->report().created);
  EXPECT_TRUE(idx->insert(1, 1));
  EXPECT_TRUE(idx->check().ok);
}

// Regression: for some sizes (7 GiB, 7929856 bytes) format managed one chunk
// more than the allocator area holds, and the clean close wrote allocator
// state over the first chunk (the canary root).
TEST(Pool, AllocatorAreaFitsEveryChunk) {
  for (uint64_t size : {uint64_t{7929856}, uint64_t{7} << 30, uint64_t{1} << 20, uint64_t{33} << 20}) {
    pm::pool_options po;
    po.pm_mode = pm::mode::dram;
    po.size = size;
    auto p = pm::pool::open(po);
    auto& h = p->header();
    EXPECT_LE(h.nchunks * (4 + pm::detail::k_bitmap_bytes), h.meta_size) << size;
    EXPECT_LE(h.meta_offset + h.meta_size, h.heap_offset) << size;
    EXPECT_LE(h.heap_offset + h.nchunks * h.chunk_size, size) << size;
  }
  temp_pool tp("odd");
  {
    auto idx = open(canary_opts(tp.path(), 7929856));
    for (uint64_t i = 0; i < 100; ++i) idx->insert(key_of(i), i);
    idx->close();
  }
  auto idx = open(canary_opts(tp.path(), 7929856));
  EXPECT_TRUE(idx->report().was_clean);
  for (uint64_t i = 0; i < 100; ++i) ASSERT_EQ(idx->lookup(key_of(i)), i);
}

// A file longer than the pool (grown after creation) still opens, and the
// whole mapping is released at close.
TEST(Pool, FileLongerThanPool) {
  temp_pool tp("longer");
  {
    auto idx = open(canary_opts(tp.path(), 4 << 20));
    idx->insert(3, 4);
    idx->close();
  }
  ASSERT_EQ(truncate(tp.path().c_str(), 8 << 20), 0);
  auto idx = open(canary_opts(tp.path()));
  EXPECT_EQ(idx->pool().size(), uint64_t{4} << 20);
  EXPECT_EQ(idx->lookup(3), 4u);
}

TEST(Pool, InfoDoesNotMarkInUse) {
  temp_pool tp("info");
  open(canary_opts(tp.path()))->close();
  std::string out;
  EXPECT_EQ(run_pmindex({"info", "--pool", tp.path()}, &out), 0);
  EXPECT_NE(out.find("clean"), std::string::npos) << out;
  EXPECT_EQ(read_header(tp.path()).clean, 1u);
  EXPECT_EQ(run_pmindex({"info", "--pool", tp.path(), "--json"}, &out), 0);
  EXPECT_NE(out.find("\"clean\":true"), std::string::npos) << out;
}


// No limit on pools open at once but memory (a server or a Python program
// with many indexes): 200 pools, each used from two threads, ids reused after
// closes. Regression: the per-thread table used to stop at 64 pools.
TEST(Pool, ManyPoolsOpenAtOnce) {
  std::vector<std::unique_ptr<index>> idx;
  for (int i = 0; i < 200; ++i) {
    options o;
    o.index = "canary";
    o.mode = pm::mode::dram;
    o.pool_size = 1 << 20;
    o.quiet = true;
    idx.push_back(open(o));
  }
  auto work = [&](uint64_t base) {
    for (size_t i = 0; i < idx.size(); ++i) ASSERT_TRUE(idx[i]->insert(base + i, i));
  };
  std::thread a(work, 0), b(work, 1000);
  a.join();
  b.join();
  for (size_t i = 0; i < idx.size(); ++i) {
    EXPECT_EQ(idx[i]->lookup(i), i);
    EXPECT_EQ(idx[i]->lookup(1000 + i), i);
  }
  // Close every other pool, open new ones in their ids: no stale state.
  for (size_t i = 0; i < idx.size(); i += 2) {
    idx[i].reset();
    options o;
    o.index = "canary";
    o.mode = pm::mode::dram;
    o.pool_size = 1 << 20;
    o.quiet = true;
    idx[i] = open(o);
    EXPECT_FALSE(idx[i]->lookup(i).has_value());
    EXPECT_TRUE(idx[i]->insert(7, 8));
  }
}

// A thread's exit gives its cached blocks and retired blocks back to the
// pool; a close may run at that same moment when the thread's user waits
// for a flag rather than for the thread's end (Python's Thread.join()
// returns before the thread's C++ thread_local destructors have run).
// Every block must come back exactly once: none lost, none freed twice.
TEST(Pool, ThreadExitDuringCloseGivesEveryBlockBackOnce) {
  temp_pool tp("exit-close");
  pm::pool_options o;
  o.path = tp.path();
  o.size = 4 << 20;
  o.pm_mode = pm::mode::persist;
  o.quiet = true;
  for (int round = 0; round < (test::long_run() ? 4000 : 500); ++round) {
    ::unlink(tp.path().c_str());
    auto p = pm::pool::open(o);
    std::atomic<int> done{0};
    auto work = [&] {
      std::vector<uint64_t> blocks;
      for (int i = 0; i < 4000; ++i) blocks.push_back(p->alloc_or_throw(64));
      for (int i = 0; i < 2000; ++i) p->retire(blocks[i]);  // limbo of this thread
      for (int i = 2000; i < 4000; ++i) p->free(blocks[i]);  // cache of this thread
      done.fetch_add(1);
    };
    std::thread a(work), b(work);
    while (done.load() < 2) std::this_thread::yield();
    p.reset();  // close, racing with the threads' exits
    a.join();
    b.join();
    o.open = pm::open_mode::must_exist;
    auto again = pm::pool::open(o);
    ASSERT_TRUE(again->was_clean());
    ASSERT_EQ(again->usage().used_blocks, 0u) << "round " << round;
    again.reset();
    o.open = pm::open_mode::create_if_missing;
  }
}

}  // namespace
}  // namespace pmindex

// pmindex damagetest: damaged pools must never crash or hang the tools.
//
// For each selected persistent index (every registered one with --index all)
// and each key kind it takes, two pristine pools are made in child
// processes: one closed cleanly, one left dirty (the child exits without
// closing, as after SIGKILL). Each case copies one of them with one kind of
// damage -- bit flips in the header, in the allocator state or in used data,
// a random 8-byte word in used data (a wild offset), a zeroed or garbage
// page, a truncation -- and runs, each in its own child process with a
// deadline: `pmindex info`, `pmindex verify`, and open + check() + (when
// check passes) lookups + a full scan. An answer is an exit code (0: the
// damage did not matter; 1: verify found keys missing or wrong; 3-7, 11: a
// typed error, 11 also when check() finds the damage). A signal
// (SIGSEGV, an assert's SIGABRT) is a crash, the deadline a hang, any
// exception that is not a pmindex::error an untyped failure: each fails the
// run with the --seed/--case that finds it again. The same damage lands on
// the same bytes, but pristine pools differ run to run in their creation
// time and, for indexes with background threads (DPTree's merges,
// PACTree's SMO thread), in their layout: --keep DIR saves each failing
// case's pool, which --replay runs again exactly.
//
//   pmindex damagetest --index I|all [--cases N] [--seed S] [--keys K] [--params P (one index)]
//                      [--case C] [--timeout SEC] [--keep DIR] [--writes] [--verbose]
// (--writes: a fourth step, open + check() + writes when check passes.)
//   pmindex damagetest --index I --replay FILE [--bytes]   (a kept case, in process)
#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cinttypes>
#include <cstdio>
#include <cstring>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "commands.hpp"
#include "keys.hpp"
#include "pmindex/error.hpp"
#include "scratch_params.hpp"
#include "sparse_file.hpp"
#include "pmindex/pm/detail/header.hpp"
#include "pmindex/util/hash.hpp"

namespace pmindex::cli {

namespace {

// The pools are small (the records take 60-600 KB): each case writes its
// image three times and forks three times, which is most of the run's time
// (4 MiB pools took 1.7x as long).
constexpr uint64_t k_pool_size = 2u << 20;
// An index with a key limit (a fixed array) takes its array at creation.
constexpr uint64_t k_array_pool_size = 4u << 20;
constexpr int k_kinds = 8;
const char* const k_kind_names[k_kinds] = {"header-bits", "meta-bits",    "data-bits", "data-word",
                                           "zero-page",   "garbage-page", "truncate",  "line-bits"};

struct config {
  std::string index;
  bool bytes = false;
  uint64_t keys = 2000;
  std::string params;    // --params (one index only)
  bool limited = false;  // the index has a key limit: key i is i
  std::string base;  // path prefix of this config's files
  std::string label() const { return index + (bytes ? " (keys=bytes)" : ""); }
};

// Byte-run keys of varying lengths (shared prefixes), and their values.
const bench::key_map k_byte_prefixes(bench::key_universe::sparse, bench::key_salt(5));
const bench::key_map k_u64_keys(bench::key_universe::sparse, bench::key_salt(1));
std::string bkey(uint64_t i) {
  std::string k = "user/" + std::to_string(k_byte_prefixes(i) % 100000) + "/";
  k.append(i % 23, static_cast<char>('a' + i % 26));
  return k + std::to_string(i);
}
// u64 keys: the harness's sparse keys, or i itself below an index's key limit.
uint64_t ukey(const config& c, uint64_t i) { return c.limited ? i : k_u64_keys(i); }
std::string bvalue(uint64_t i) { return std::string(i % 41, static_cast<char>('A' + i % 26)); }

options open_options(const config& c, const std::string& path, pm::open_mode m) {
  options o;
  o.index = c.index;
  o.pool_path = path;
  o.pool_size = c.limited ? k_array_pool_size : k_pool_size;
  o.open = m;
  o.quiet = true;
  o.params = c.params;
  if (c.bytes) o.params += o.params.empty() ? "keys=bytes" : ",keys=bytes";
  return o;
}

// Child: the first `keys` records, and 1/4 more inserted then removed (free
// space and holes). Closed cleanly unless `dirty`.
[[noreturn]] void make_pool(const config& c, const std::string& path, bool dirty) {
  try {
    auto idx = open(open_options(c, path, pm::open_mode::must_create));
    const uint64_t extra = c.keys / 4;
    for (uint64_t i = 0; i < c.keys + extra; ++i) {
      if (c.bytes) idx->insert(bkey(i), bvalue(i));
      else idx->insert(ukey(c, i), bench::value_of(ukey(c, i)));
    }
    for (uint64_t i = c.keys; i < c.keys + extra; ++i) {
      if (c.bytes) idx->remove(bkey(i));
      else idx->remove(ukey(c, i));
    }
    if (!dirty) idx->close();
    std::fflush(nullptr);
    _exit(0);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "damagetest: making %s: %s\n", path.c_str(), e.what());
    _exit(1);
  }
}

std::vector<char> read_file(const std::string& path) {
  std::vector<char> v;
  FILE* f = std::fopen(path.c_str(), "rb");
  if (!f) throw error(errc::io, "cannot read " + path);
  char buf[1 << 16];
  size_t n;
  while ((n = std::fread(buf, 1, sizeof buf, f)) > 0) v.insert(v.end(), buf, buf + n);
  std::fclose(f);
  return v;
}

// Writes the image sparsely (bench/sparse_file.hpp): the cases' thousands
// of images of a small pool, mostly zeros, cost a tenth.
void write_file(const std::string& path, const char* p, size_t n) {
  ::unlink(path.c_str());
  int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (fd < 0) throw error(errc::io, "cannot write " + path);
  const bool ok = ::ftruncate(fd, static_cast<off_t>(n)) == 0 && bench::write_nonzero_pages(fd, p, n, 0);
  ::close(fd);
  if (!ok) throw error(errc::io, "cannot write " + path);
}

struct pristine {
  std::vector<char> image;
  std::vector<uint64_t> used_lines;  // 64-byte lines of the heap that are not all zero
  uint64_t meta_off = 0, meta_size = 0, heap_off = 0;
};

pristine load_pristine(const std::string& path) {
  pristine p;
  p.image = read_file(path);
  const auto* h = reinterpret_cast<const pm::detail::pool_header*>(p.image.data());
  p.meta_off = h->meta_offset;
  p.meta_size = h->meta_size;
  p.heap_off = h->heap_offset;
  static const char zero[64] = {};
  for (uint64_t off = p.heap_off; off + 64 <= p.image.size(); off += 64)
    if (std::memcmp(p.image.data() + off, zero, 64) != 0) p.used_lines.push_back(off);
  if (p.used_lines.empty()) p.used_lines.push_back(p.heap_off);
  return p;
}

using bench::rng;

// The damaged copy of case `c`: returns the file length to write and says
// what was done in `what`.
size_t damage(std::vector<char>& img, const pristine& p, int kind, rng& r, std::string& what) {
  size_t len = img.size();
  auto flip = [&](uint64_t lo, uint64_t n, int bits) {
    for (int b = 0; b < bits; ++b) {
      uint64_t off = lo + r.below(n);
      img[off] = static_cast<char>(img[off] ^ (1 << r.below(8)));
      what += " " + std::to_string(off);
    }
  };
  auto used_line = [&] { return p.used_lines[r.below(p.used_lines.size())]; };
  switch (kind) {
    case 0: flip(0, sizeof(pm::detail::pool_header), 1 + static_cast<int>(r.below(3))); break;
    case 1: flip(p.meta_off, p.meta_size, 1 + static_cast<int>(r.below(4))); break;
    case 2:
      for (int i = 0, n = 1 + static_cast<int>(r.below(8)); i < n; ++i) flip(used_line(), 64, 1);
      break;
    case 3: {  // a wild or plausible-but-wrong offset in an aligned word
      uint64_t off = used_line() + 8 * r.below(8);
      uint64_t v;
      switch (r.below(4)) {
        case 0: v = r.next(); break;
        case 1: v = r.below(img.size() * 2); break;
        case 2: v = used_line() + 16 * r.below(4); break;
        default: v = 0; break;
      }
      std::memcpy(&img[off], &v, 8);
      what = " word@" + std::to_string(off);
      break;
    }
    case 4:
    case 5: {
      uint64_t page = (used_line() & ~uint64_t{4095});
      if (r.below(8) == 0) page = p.meta_off + (r.below(p.meta_size) & ~uint64_t{4095});
      for (uint64_t i = 0; i < 4096 && page + i < img.size(); ++i)
        img[page + i] = kind == 4 ? 0 : static_cast<char>(r.next());
      what = " page@" + std::to_string(page);
      break;
    }
    case 6:
      len = r.below(2) ? r.below(img.size()) : (r.below(img.size() / 4096) * 4096);
      what = " to " + std::to_string(len);
      break;
    default:  // many bits in one used line (a torn line of garbage)
      flip(used_line(), 64, 8 + static_cast<int>(r.below(24)));
      break;
  }
  return len;
}

enum class step { info, verify, open_check_scan, open_check_write };
const char* const k_step_names[] = {"info", "verify", "open+check+scan", "open+check+write"};

// Child: open + check() + lookups + a full scan, through the Index API.
int open_check_scan(const config& c, const std::string& path) {
  options o = open_options(c, path, pm::open_mode::must_exist);
  o.params.clear();
  auto idx = open(o);
  // check() is the gate: it must find any damage that reads could trip on
  // (bounded, every offset validated); an index that fails it is not read.
  if (!idx->check().ok) return static_cast<int>(errc::corrupt);
  std::string v;
  for (uint64_t i = 0; i < c.keys; ++i) {
    if (c.bytes) idx->lookup(bkey(i), &v);
    else idx->lookup(ukey(c, i));
  }
  // A full scan; a damaged index may answer out of order: stop there. An
  // unordered index has none (its lookups above are the reads).
  if (auto e = find_index(c.index); e && !e->ordered) {
    idx->close();
    return 0;
  }
  uint64_t seen = 0;
  if (c.bytes) {
    record_buffer buf;
    std::string from;
    for (;;) {
      buf.clear();
      size_t n = idx->scan(from, 256, buf);
      seen += n;
      if (n < 256 || seen > (uint64_t{1} << 24)) break;
      std::string last(buf.key(n - 1));
      if (last < from) break;
      from = last + '\0';
    }
  } else {
    std::vector<record> buf(256);
    uint64_t from = 0;
    for (;;) {
      size_t n = idx->scan(from, buf.size(), buf.data());
      seen += n;
      if (n < buf.size() || buf[n - 1].key == UINT64_MAX || buf[n - 1].key < from || seen > (uint64_t{1} << 24)) break;
      from = buf[n - 1].key + 1;
    }
  }
  idx->close();
  return 0;
}

// Child (--writes): open + check() + writes: a quarter of the keys updated,
// as many new ones inserted, every eighth removed. check() is the gate for
// writes too: damage it passes must not crash or hang a writer.
int open_check_write(const config& c, const std::string& path) {
  options o = open_options(c, path, pm::open_mode::must_exist);
  o.params.clear();
  auto idx = open(o);
  if (!idx->check().ok) return static_cast<int>(errc::corrupt);
  const uint64_t n = c.limited ? c.keys : c.keys + c.keys / 4;  // an index with a key limit: no new keys
  for (uint64_t i = 0; i < n; ++i) {
    const bool fresh = i >= c.keys, drop = !fresh && i % 8 == 0;
    if (fresh || i % 4 == 1) {
      if (c.bytes) idx->upsert(bkey(i), bvalue(i + 1));
      else idx->upsert(ukey(c, i), i + 1);
    } else if (drop) {
      if (c.bytes) idx->remove(bkey(i));
      else idx->remove(ukey(c, i));
    }
  }
  idx->close();
  return 0;
}

[[noreturn]] void run_step(const config& c, step s, const std::string& path, unsigned timeout, bool verbose) {
  alarm(timeout);
  if (!verbose) {
    int fd = ::open("/dev/null", O_WRONLY);
    dup2(fd, 1);
    dup2(fd, 2);
  }
  int rc;
  try {
    switch (s) {
      case step::info: {
        args a("info", {"--pool", path});
        rc = cmd_info(a);
        break;
      }
      case step::verify: {
        args a("verify", {"--pool", path, "--keys", c.bytes ? "0" : std::to_string(c.keys)});
        rc = cmd_verify(a);
        break;
      }
      case step::open_check_scan: rc = open_check_scan(c, path); break;
      default: rc = open_check_write(c, path); break;
    }
  } catch (const error& e) {
    std::fprintf(stderr, "pmindex: %s\n", e.what());
    rc = e.exit_code();
  } catch (const std::exception& e) {
    std::fprintf(stderr, "pmindex: internal error: %s\n", e.what());
    rc = 100;  // not a typed error
  }
  std::fflush(nullptr);
  _exit(rc);
}

struct outcome {
  bool bad = false;
  std::string text;  // "exit 11", "SIGSEGV", "hang"
};

outcome wait_child(pid_t pid) {
  int st = 0;
  while (waitpid(pid, &st, 0) < 0 && errno == EINTR) {
  }
  if (WIFEXITED(st)) {
    int rc = WEXITSTATUS(st);
    bool typed = rc == 0 || rc == 1 || (rc >= 3 && rc <= 7) || rc == 11;
    return {!typed, rc == 100 ? "untyped exception" : "exit " + std::to_string(rc)};
  }
  int sig = WIFSIGNALED(st) ? WTERMSIG(st) : 0;
  if (sig == SIGALRM) return {true, "hang (deadline)"};
  return {true, std::string("signal ") + strsignal(sig)};
}

pid_t spawn(const std::function<void()>& child) {
  std::fflush(nullptr);
  pid_t pid = fork();
  if (pid < 0) throw error(errc::io, "fork failed");
  if (pid == 0) {
    child();
    _exit(0);
  }
  return pid;
}

}  // namespace

int cmd_damagetest(args& a) {
  std::string which = a.str("index", "all");
  uint64_t cases = a.u64("cases", 200, 1, 10000000);
  uint64_t seed = a.u64("seed", 1, 0, UINT64_MAX);
  uint64_t keys = a.u64("keys", 2000, 1, 100000);
  int64_t only = a.has("case") ? static_cast<int64_t>(a.u64("case", 0, 0, 10000000)) : -1;
  unsigned timeout = static_cast<unsigned>(a.u64("timeout", 20, 1, 3600));
  std::string keep = a.str("keep", "");
  bool verbose = a.flag("verbose");
  const int steps = a.flag("writes") ? 4 : 3;  // --writes: open + check + writes too
  // Debugging a failure: one saved file (--keep), open + check + scan in
  // this process (under a debugger), with the config of --index.
  std::string replay = a.str("replay", "");
  bool replay_bytes = a.flag("bytes");
  const std::string params = a.joined("params", ',');
  a.finish();
  if (!params.empty() && which == "all") throw error(errc::usage, "damagetest --params needs one --index");
  if (!replay.empty()) {
    config c;
    c.index = which;
    c.bytes = replay_bytes;
    c.keys = keys;
    if (auto e = find_index(which)) c.limited = key_limit(*e, params) != 0;
    int rc = open_check_scan(c, replay);
    std::printf("damagetest --replay %s: open+check+scan exit %d\n", replay.c_str(), rc);
    if (rc == 0 && steps == 4) {
      rc = open_check_write(c, replay);
      std::printf("damagetest --replay %s: open+check+write exit %d\n", replay.c_str(), rc);
    }
    return rc;
  }

  std::vector<config> configs;
  for (auto& e : registered_indexes()) {
    if (which != "all" && e->name != which) continue;
    if (!e->persistent()) {
      if (which != "all") throw error(errc::usage, e->name + " is not persistent: no pool to damage");
      continue;
    }
    for (bool b : {false, true}) {
      // The byte run's keys (bkey) reach 39 bytes: an index with shorter
      // byte keys (the pmemids structures: 16) is damaged with u64 keys only.
      if (b && (!e->supports(key_kind::bytes) || e->max_key < 40)) continue;
      config c;
      c.index = e->name;
      c.bytes = b;
      c.keys = keys;
      // An index with a key limit: its array sized for these pools (the
      // test profile's params beneath --params; scratch_params.hpp).
      c.params = scratch_params(*e, params);
      c.limited = key_limit(*e, c.params) != 0;
      c.base = "/dev/shm/pmindex-damage." + scratch_tag() + "." + e->name + (b ? ".b" : ".u");
      configs.push_back(c);
    }
  }
  if (configs.empty()) throw error(errc::usage, "unknown index '" + which + "' (see `pmindex list`)");

  remove_stale_pools("damagetest", "/dev/shm", "pmindex-damage.");
  uint64_t failures = 0;
  for (auto& c : configs) {
    pristine pr[2];
    for (int d = 0; d < 2; ++d) {
      std::string path = c.base + (d ? ".dirty" : ".clean");
      ::unlink(path.c_str());
      outcome o = wait_child(spawn([&] { make_pool(c, path, d == 1); }));
      if (o.text != "exit 0") throw error(errc::failure, "damagetest: making the pool of " + c.label() + ": " + o.text);
      pr[d] = load_pristine(path);
      ::unlink(path.c_str());
    }
    std::map<std::string, uint64_t> answers;
    uint64_t bad = 0;
    const std::string path = c.base + ".case";
    // One image buffer for every case: a fresh copy per case would leave
    // each freed 4 MiB copy in ASan's quarantine, and every fork below
    // would copy the page tables of all of them.
    std::vector<char> img;
    // --case C runs case C alone, whatever --cases says (the FAIL lines
    // print --seed and --case only).
    const uint64_t first = only >= 0 ? static_cast<uint64_t>(only) : 0, end = only >= 0 ? first + 1 : cases;
    for (uint64_t i = first; i < end; ++i) {
      rng r(util::mix64(seed * 0x100000001B3ull + i));
      const int d = static_cast<int>(r.below(2));
      const int kind = static_cast<int>(r.below(k_kinds));
      img.assign(pr[d].image.begin(), pr[d].image.end());
      std::string what;
      size_t len = damage(img, pr[d], kind, r, what);
      for (int s = 0; s < steps; ++s) {
        write_file(path, img.data(), len);
        outcome o = wait_child(spawn([&] { run_step(c, static_cast<step>(s), path, timeout, verbose); }));
        ++answers[std::string(k_step_names[s]) + ": " + o.text];
        if (!o.bad) continue;
        ++bad;
        std::printf("FAIL %s case %" PRIu64 " (%s pool, %s%s): %s: %s  [pmindex damagetest --index %s --seed %" PRIu64
                    " --case %" PRIu64 "]\n",
                    c.label().c_str(), i, d ? "dirty" : "clean", k_kind_names[kind], what.c_str(), k_step_names[s],
                    o.text.c_str(), c.index.c_str(), seed, i);
        if (!keep.empty()) {
          std::string out = keep + "/" + c.index + (c.bytes ? ".b" : ".u") + ".case" + std::to_string(i) + ".pool";
          write_file(out, img.data(), len);
        }
      }
    }
    ::unlink(path.c_str());
    std::printf("%s: %" PRIu64 " cases, %" PRIu64 " failures;", c.label().c_str(), only >= 0 ? 1 : cases, bad);
    for (auto& [k, n] : answers) std::printf(" [%s] %" PRIu64, k.c_str(), n);
    std::printf("\n");
    std::fflush(stdout);
    failures += bad;
  }
  if (failures) {
    std::printf("damagetest: %" PRIu64 " crashes, hangs or untyped errors%s\n", failures,
                keep.empty() ? " (--keep DIR saves each failing pool; --replay FILE runs one again exactly)" : "");
    return static_cast<int>(errc::failure);
  }
  std::printf("damagetest: ok\n");
  return 0;
}

}  // namespace pmindex::cli

// The crash checker's driver: chooses crash points, forks one child per
// crash point to check its images, collects verdicts, saves failing images.
#include "crash/crashtest.hpp"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <algorithm>
#include <cstring>
#include <vector>

#include "checker.hpp"
#include "image.hpp"
#include "pmindex/error.hpp"

namespace pmindex::crash {

namespace {
// Crash images per point in exhaustive mode beyond the two extremes, when a
// point has too many combinations to enumerate.
constexpr uint64_t k_exhaustive_random = 4;
}  // namespace

checker::checker(const config& c) : c_(c), vrng_(bench::thread_seed(c.seed, 0, 1)) {
  auto e = find_index(c_.index);
  if (!e) throw error(errc::usage, "unknown index '" + c_.index + "' (see `pmindex list`)");
  bool persist = false;
  for (auto m : e->modes) persist |= m == pm::mode::persist;
  if (!persist) throw error(errc::unsupported, "index " + c_.index + " has no persist mode: nothing to crash-test");
  if (c_.mode != pm::mode::persist && (c_.mode != pm::mode::tx || !e->supports(c_.mode)))
    throw error(errc::unsupported, "crashtest --mode: persist, or tx for an index with a tx mode");
  if (!pm::k_crash_sim)
    throw error(errc::unsupported, "this pmindex was built with -DPMINDEX_CRASH_SIM=OFF: no crash simulation");
  if (c_.threads < 1 || c_.threads > 16) throw error(errc::usage, "--threads must be 1..16");
  if (c_.keys < 2 || c_.keys > 100000) throw error(errc::usage, "--keys must be 2..100000");
  if (c_.keyset != "disjoint" && c_.keyset != "shared" && c_.keyset != "mixed")
    throw error(errc::usage, "--keyset must be disjoint, shared or mixed");
  if (c_.ops < c_.threads) throw error(errc::usage, "--ops must be at least --threads");
  if (c_.threads > 1 && c_.keyset != "shared" && c_.keys < 4 * c_.threads)
    throw error(errc::usage, "--keys must be at least 4 per thread");
  choose_key_kind(*e);
  ordered_ = e->ordered;
  serial_ = !e->concurrent && c_.threads > 1;
  limit_ = key_limit(*e, c_.params);
  make_keys();
  for (auto& k : keys_)
    if (bytes_ && k.size() > e->max_key)
      throw error(errc::key_too_long, "dataset " + c_.dataset->name + " gave a key of " + std::to_string(k.size()) +
                                          " bytes; " + e->name + " takes at most " + std::to_string(e->max_key));
  void* m = mmap(nullptr, k_msg, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  if (m == MAP_FAILED) throw error(errc::io, "cannot map the verdict page");
  msg_ = static_cast<char*>(m);
}

// Byte keys (a dataset that is not integer) or values other than 8 bytes
// run the byte calls on an index created keys=bytes; keys=u64 is refused.
void checker::choose_key_kind(const index_entry& e) {
  bytes_ = (c_.dataset && !c_.dataset->integer) || c_.value_size != 8;
  if (!bytes_) return;
  std::string why = c_.value_size != 8 ? "--value-size " + std::to_string(c_.value_size)
                                       : "--dataset " + c_.dataset->name;
  c_.params = byte_run_params(e, c_.params, c_.value_size, why);
  if (!c_.values.make || !c_.values.matches)
    throw error(errc::usage, "byte values need a value_source (crash::config::values)");
}

std::string byte_run_params(const index_entry& e, const std::string& params, uint64_t value_size,
                            const std::string& why) {
  if (!e.supports(key_kind::bytes))
    throw error(errc::unsupported, "index " + e.name + " does not take keys=bytes (needed by " + why + ")");
  if (value_size > e.max_value)
    throw error(errc::value_too_long,
                why + ": " + e.name + " takes values of at most " + std::to_string(e.max_value) + " bytes");
  bool keys_given = false, value_given = false;
  for (size_t i = 0, j; i <= params.size(); i = j + 1) {
    j = params.find(',', i);
    if (j == std::string::npos) j = params.size();
    std::string_view kv(params.data() + i, j - i);
    value_given |= kv.substr(0, 6) == "value=";
    if (kv.substr(0, 5) != "keys=") continue;
    if (kv != "keys=bytes") throw error(errc::usage, why + " needs keys=bytes, not " + std::string(kv));
    keys_given = true;
  }
  std::string out = keys_given ? params : params.empty() ? "keys=bytes" : "keys=bytes," + params;
  // An index whose value slot is a creation parameter (`value`, the pmemids
  // structures) is created with a slot for values of value_size bytes when
  // its default slot is smaller; a `value=` given is kept (and a value
  // longer than it is value_too_long at the first write).
  if (!value_given)
    for (auto& p : e.params)
      if (p.name == "value" && p.choices.empty() && value_size > std::stoull(p.def) && value_size <= p.max)
        out += ",value=" + std::to_string(value_size);
  return out;
}

checker::~checker() {
  if (msg_) munmap(msg_, k_msg);
}

bool checker::wants(uint64_t k) {
  if (stop_) return false;
  if (c_.replay) return k == c_.replay_point;
  if (c_.exhaustive) return true;
  if (phase_ == phase::done) return end_images_ > 0 || points_.lower_bound(k) != points_.end();
  return points_.count(k) != 0;
}

// Describes the crash point: which operations were in flight.
std::string checker::where(uint64_t k) const {
  std::string s = "crash point " + std::to_string(k);
  if (phase_ == phase::creating) return s + " (while creating the index)";
  if (phase_ == phase::done) return s + " (after the history)";
  std::string fl;
  for (auto& log : logs_)
    for (auto& o : log) {
      if (!o.start) break;
      if (o.end) continue;
      if (!fl.empty()) fl += ", ";
      fl += "thread " + std::to_string(o.thread) + " " + to_string(o.kind) + "(" + show_key(o.ki) +
            (o.kind == op_kind::insert || o.kind == op_kind::update ? ", " + hex(o.value) : "") + ")";
    }
  return s + (fl.empty() ? " (between operations)" : " (during " + fl + ")");
}

void checker::crash(uint64_t k, bool frozen) {
  std::vector<uint64_t> variants;
  auto cands = obs_->candidates();
  uint64_t combos = combinations(cands);
  if (c_.replay) {
    variants = {c_.replay_variant};
  } else if (c_.exhaustive) {
    variants = all_variants(combos, k_exhaustive_random);
  } else {
    uint64_t m = 0;
    if (phase_ == phase::done) {
      for (auto it = points_.lower_bound(k); it != points_.end(); it = points_.erase(it)) m += it->second;
      m += end_images_;
      end_images_ = 0;
    } else {
      m = points_[k];
      points_.erase(k);
    }
    variants = pick_variants(combos, m, vrng_);
  }
  ++r_.crash_points;
  // Blocks handed out right now: a crash image may reach no more than these.
  uint64_t used = UINT64_MAX;
  if (idx_ && phase_ != phase::creating && frozen) used = idx_->pool().usage().used_blocks;
  for (size_t i = 0; i < variants.size() && !stop_;) i += run_images(k, variants, i, cands, frozen, used);
}

namespace {
// The page a child writes its verdicts to.
struct verdict_page {
  uint64_t passed;  // images of the batch that passed, in order
  char text[4096 - sizeof(uint64_t)];  // "ok", or the first failing image's verdict
};

// A memfd holding the pool image at base (its resident pages; the others
// were never touched, and holes read as zeros): every private mapping of it
// is a fresh copy-on-write image. -1 if the kernel refuses (the caller then
// checks one image per child).
int image_memfd(char* base, uint64_t size) {
  constexpr uint64_t k_page = 4096;
  std::vector<unsigned char> res((size + k_page - 1) / k_page);
  if (mincore(base, size, res.data()) != 0) std::fill(res.begin(), res.end(), 1);
  int fd = memfd_create("pmindex-crash-image", MFD_CLOEXEC);
  if (fd < 0) return -1;
  bool ok = ftruncate(fd, static_cast<off_t>(size)) == 0;
  for (uint64_t i = 0; ok && i < res.size();) {
    if (!(res[i] & 1)) {
      ++i;
      continue;
    }
    uint64_t j = i;
    while (j < res.size() && (res[j] & 1)) ++j;  // one write per resident run
    uint64_t off = i * k_page, len = std::min(size, j * k_page) - off;
    ok = pwrite(fd, base + off, len, static_cast<off_t>(off)) == static_cast<ssize_t>(len);
    i = j;
  }
  if (!ok) ::close(fd);
  return ok ? fd : -1;
}
}  // namespace

// Checks the images variants[first..] of crash point k in ONE child: a fork
// costs ~2 ms in a sanitizer build, more than most recoveries, and an
// exhaustive point has several images. Each image but the last is a private
// mapping of a memfd holding the point's pool (a fresh copy at an address of
// its own, so every recovery starts from the same bytes); the last moves the
// child's snapshot itself, as a lone image does. The first failing image
// ends the child: the parent records it and forks again for the rest.
// Returns the number of images accounted for (at least one).
size_t checker::run_images(uint64_t k, const std::vector<uint64_t>& vs, size_t first, const std::vector<candidate>& c,
                           bool frozen, uint64_t used) {
  static_assert(sizeof(verdict_page) == k_msg);
  auto* page = reinterpret_cast<verdict_page*>(msg_);
  std::memset(msg_, 0, k_msg);
  pid_t pid = fork();  // the child ends with _exit: no stdio buffer is written twice
  if (pid < 0) throw error(errc::io, std::string("fork failed: ") + std::strerror(errno));
  if (pid == 0) {
    // The child: a copy-on-write snapshot of the pool, the shadow and the log.
    if (!c_.verbose) {
      int fd = ::open("/dev/null", O_WRONLY);
      if (fd >= 0) dup2(fd, 2);
    }
    char* base = obs_->base();
    const uint64_t size = obs_->size();
    const int fd = vs.size() - first > 1 ? image_memfd(base, size) : -1;
    const size_t last = fd < 0 ? first : vs.size() - 1;
    for (size_t j = first; j <= last; ++j) {
      alarm(c_.child_timeout);
      std::string verdict;
      void* img = MAP_FAILED;
      if (j < last) {
        img = mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_PRIVATE, fd, 0);
        if (img != MAP_FAILED) apply_variant(c, c_.seed, k, vs[j], static_cast<char*>(img));
      } else {
        apply_variant(c, c_.seed, k, vs[j], base);
        // Move the pool: an index that kept a virtual address crashes or fails.
        void* dst = mmap(nullptr, size, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        img = dst == MAP_FAILED ? MAP_FAILED : mremap(base, size, size, MREMAP_MAYMOVE | MREMAP_FIXED, dst);
      }
      if (img == MAP_FAILED) {
        verdict = "checker: cannot map the crash image";
      } else {
        try {
          verdict = oracle(static_cast<char*>(img), frozen, used);
        } catch (const std::exception& e) {
          verdict = std::string("exception: ") + e.what();
        }
        if (j < last) munmap(img, size);
      }
      if (!verdict.empty()) {
        std::snprintf(page->text, sizeof page->text, "%s", verdict.c_str());
        _exit(1);
      }
      page->passed = j - first + 1;
    }
    std::snprintf(page->text, sizeof page->text, "ok");
    _exit(0);
  }
  int st = 0;
  while (waitpid(pid, &st, 0) < 0 && errno == EINTR) {
  }
  const uint64_t passed = std::min<uint64_t>(page->passed, vs.size() - first);
  r_.images += passed;
  r_.unfrozen += frozen ? 0 : passed;
  if (WIFEXITED(st) && WEXITSTATUS(st) == 0 && std::strcmp(page->text, "ok") == 0 && passed > 0) return passed;
  // A child that hung may be stuck on a lock another thread held at fork()
  // (ASan's allocator has no fork handler), not in recovery: surely when
  // the image was forked while another thread still ran, and, rarely, even
  // when every other thread looked parked or blocked (in CI, DPTree
  // children hung on an allocator region lock though the freeze had waited
  // for the merge thread; the freeze reads /proc, which cannot show every
  // way a thread can leave an allocator lock held or half-handed-over). So
  // the image is checked once more in a new child (the threads have had the
  // timeout to leave any lock). The new fork may see more plain stores of a
  // thread that ran on, but no flush or fence (a thread parks at its next
  // event): still a state a crash at point k can leave, as an unfrozen image
  // is (so the recheck skips the block-count check). A second hang is a
  // verdict.
  if (WIFSIGNALED(st) && WTERMSIG(st) == SIGALRM && !rechecking_) {
    ++r_.rechecked;
    rechecking_ = true;
    const size_t more = run_images(k, vs, first + passed, c, false, used);
    rechecking_ = false;
    return passed + more;
  }
  // Image first + passed failed (or the child died checking it).
  const uint64_t v = vs[first + passed];
  ++r_.images;
  r_.unfrozen += !frozen;
  std::string what;
  if (WIFSIGNALED(st) && WTERMSIG(st) == SIGALRM)
    what = "recovery or the oracle hung (no verdict within " + std::to_string(c_.child_timeout) + " s)";
  else if (WIFSIGNALED(st))
    what = std::string("the recovering child died of signal ") + strsignal(WTERMSIG(st));
  else if (page->text[0] && std::strcmp(page->text, "ok") != 0)
    what = page->text;
  else
    what = "the recovering child exited with status " + std::to_string(WEXITSTATUS(st)) +
           " without a verdict (sanitizer report? rerun the command below)";
  std::string head = where(k) + ", image variant " + std::to_string(v) + " (" + std::to_string(c.size()) +
                     " lines not durable): " + what;
  ++r_.violations;
  if (r_.messages.size() < c_.details) {
    std::string path = save_image(k, v, c);
    std::string full = head + (path.empty() ? "" : "\n  image: " + path) + "\n  reproduce: " + c_.command + " --point " +
                       std::to_string(k) + " --variant " + std::to_string(v) + " --verbose" +
                       (c_.threads > 1 ? "\n  (threaded histories are not deterministic: the point may differ)" : "");
    r_.messages.push_back(full);
    if (c_.print_violations) std::fprintf(stderr, "violation: %s\n", full.c_str());
  }
  if (c_.max_violations && r_.violations >= c_.max_violations) stop_ = true;
  return passed + 1;
}

// Writes the image a child checked (before its recovery changed it) to a
// sparse file; returns its path ("" if not saved).
std::string checker::save_image(uint64_t k, uint64_t v, const std::vector<candidate>& c) {
  if (c_.save_dir.empty()) return "";
  std::string path = c_.save_dir + "/pmindex-crash-" + c_.index + "-" + std::to_string(c_.seed) + "-" +
                     std::to_string(k) + "-" + std::to_string(v) + ".img";
  pid_t pid = fork();  // the child ends with _exit: no stdio buffer is written twice
  if (pid == 0) {
    apply_variant(c, c_.seed, k, v, obs_->base());
    int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    bool ok = fd >= 0 && ftruncate(fd, static_cast<off_t>(obs_->size())) == 0;
    static const char zero[4096] = {};
    for (uint64_t off = 0; ok && off < obs_->size(); off += 4096) {
      const char* p = obs_->base() + off;
      if (std::memcmp(p, zero, 4096) == 0) continue;  // a hole reads as zeros
      ok = pwrite(fd, p, 4096, static_cast<off_t>(off)) == 4096;
    }
    _exit(ok ? 0 : 1);
  }
  int st = 0;
  if (pid > 0)
    while (waitpid(pid, &st, 0) < 0 && errno == EINTR) {
    }
  ++saved_;
  return WIFEXITED(st) && WEXITSTATUS(st) == 0 ? path : "";
}

result checker::run() {
  auto t0 = std::chrono::steady_clock::now();
  if (!c_.exhaustive && !c_.replay) {
    // Random mode: count the events of the history, then draw the points.
    run_history(true);
    uint64_t e = r_.events;
    for (uint64_t i = 0; i < c_.images; ++i) {
      uint64_t k = vrng_() % (e + 1);
      if (k == e) ++end_images_;
      else ++points_[k];
    }
  }
  run_history(false);
  r_.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return r_;
}

result run(const config& c) {
  checker ch(c);
  return ch.run();
}

}  // namespace pmindex::crash

// pmindex info | load | verify
//
// load/verify [--dataset D] [--value-size B]: see load_records below and
// tools/dataset_args.hpp (byte runs create the index keys=bytes).
#include <cinttypes>
#include <cstdio>
#include <cstring>
#include <ctime>

#include "commands.hpp"
#include "dataset_args.hpp"
#include "json.hpp"
#include "keys.hpp"
#include "null_index.hpp"
#include "pmindex/error.hpp"

namespace pmindex::cli {

namespace json = bench::json;

int cmd_info(args& a) {
  pm::pool_options po;
  po.path = a.str("pool", po.path);
  po.open = pm::open_mode::must_exist;
  po.inspect = true;  // read the header without marking the pool in use (nor flushing)
  bool json = a.flag("json");
  a.finish();
  // Read the header without opening the pool for use (no dirty mark).
  auto p = pm::pool::open(po);
  const auto& h = p->header();
  bool clean = p->was_clean();
  auto u = p->usage();
  std::time_t ct = static_cast<std::time_t>(h.create_time);
  char when[64];
  // A damaged header may hold a time gmtime cannot represent (it returns
  // null, and strftime of null crashed `info`, found by damagetest).
  std::tm tm_buf;
  if (const std::tm* tm = gmtime_r(&ct, &tm_buf)) std::strftime(when, sizeof when, "%Y-%m-%d %H:%M:%S", tm);
  else std::snprintf(when, sizeof when, "(not a time: %llu)", static_cast<unsigned long long>(h.create_time));
  // The mode opens use unless told otherwise, and the last open's when it
  // differs (a dirty pool last used in volatile mode will be refused).
  const std::string mode(pm::to_string(p->stored_mode()));
  const std::string last(pm::to_string(static_cast<pm::mode>(h.last_mode)));
  if (json) {
    // One line, as before (scripts read it with a JSON parser).
    auto j = bench::json::value::object();
    j["pool"] = po.path;
    j["format_version"] = static_cast<uint64_t>(h.format_version);
    j["index"] = std::string(h.index_name, strnlen(h.index_name, sizeof h.index_name));
    j["params"] = std::string(h.index_params, strnlen(h.index_params, sizeof h.index_params));
    j["mode"] = mode;
    j["last_mode"] = last;
    j["size"] = static_cast<uint64_t>(h.pool_size);
    j["heap_bytes"] = static_cast<uint64_t>(h.nchunks * h.chunk_size);
    j["used_bytes"] = static_cast<uint64_t>(clean ? h.used_at_close : u.used_bytes);
    j["clean"] = clean;
    j["opens"] = static_cast<uint64_t>(h.open_count);
    j["created"] = std::string(when);
    std::fputs(json::dump(j, 0).c_str(), stdout);
  } else {
    std::string mode_line = mode == last ? mode : mode + " (last opened in " + last + " mode)";
    std::printf("pool      %s\nformat    %u\nindex     %s\nparams    %s\nmode      %s\nsize      %" PRIu64
                " bytes (heap %" PRIu64 ")\nused      %s\nshutdown  %s\nopens     %" PRIu64
                "\ncreated   %s UTC\n",
                po.path.c_str(), h.format_version, h.index_name, h.index_params[0] ? h.index_params : "-",
                mode_line.c_str(), h.pool_size, h.nchunks * h.chunk_size,
                clean ? (std::to_string(h.used_at_close) + " bytes").c_str() : "unknown until recovery",
                clean ? "clean" : "dirty (will be recovered at next open)", h.open_count, when);
  }
  p->abandon();  // leave the header exactly as found
  return 0;
}

// The records of load/verify: record i of seed s. Without --dataset, the
// harness's sparse key of id i for seed s (the keys of `--dataset u64
// --seed s`) with bench's value_of(key) (u64 calls); with one,
// the dataset's key of id i and bench's value_bytes(i, --value-size),
// through the byte calls unless the keys are integers and values 8 bytes.
class load_records {
 public:
  load_records(data_options d, uint64_t seed)
      : d_(std::move(d)), keys_(bench::key_universe::sparse, bench::key_salt(seed)) {}
  bool bytes() const { return d_.bytes; }
  // An index with a key limit (index_entry::key_limit) takes record i's key
  // as the integer i (byte runs: its 8 bytes; the integer datasets only).
  void limit_keys(const std::string& index, const std::string& params) {
    auto e = find_index(index);
    if (!e || !key_limit(*e, params)) return;
    if (d_.ds && d_.ds->name() != "u64" && d_.ds->name() != "u64-bytes")
      throw error(errc::usage, index + " takes integer keys below its key limit: --dataset must be u64 or u64-bytes");
    limited_ = true;
  }
  // u64 runs
  uint64_t key_u64(uint64_t i) const {
    if (limited_) return i;
    return d_.ds ? d_.ds->key_u64(i) : keys_(i);
  }
  uint64_t value_u64(uint64_t i) const {
    if (!d_.ds) return bench::value_of(keys_(i));
    bench::value_bytes(i, 8, vbuf_);
    return pmindex::value_u64(vbuf_);
  }
  // byte runs
  std::string_view key(uint64_t i) const {
    if (limited_) return kbuf_.assign(std::string_view(key_bytes(i)));
    if (d_.ds) return d_.ds->key(i, kbuf_);
    kbuf_.assign(std::string_view(key_bytes(keys_(i))));
    return kbuf_;
  }
  const std::string& value(uint64_t i) const {
    bench::value_bytes(i, d_.value_size, vbuf_);
    return vbuf_;
  }
  bool value_ok(uint64_t i, std::string_view v) const {
    return v.size() == d_.value_size && bench::value_matches(i, v);
  }
  std::string name(uint64_t i) const {
    return bytes() ? "record " + std::to_string(i) : "key " + std::to_string(key_u64(i));
  }

 private:
  data_options d_;
  bench::key_map keys_;  // without a dataset
  bool limited_ = false;
  mutable std::string kbuf_, vbuf_;
};

int cmd_load(args& a) {
  options o = index_options(a, pm::open_mode::create_if_missing);
  uint64_t n = a.u64("keys", 1000000, 0, uint64_t{1} << 40);
  uint64_t seed = a.u64("seed", 1, 0, UINT64_MAX);
  uint64_t ack = a.u64("ack-every", 0, 0, uint64_t{1} << 40);
  data_options d = read_data_options(a, seed);
  a.finish();
  // A volatile index keeps no pool: loading it into --pool would write
  // nothing there. --mode dram says so explicitly (load into DRAM, discard).
  const bool to_dram = o.mode == pm::mode::dram;
  if (auto e = find_index(o.index); e && bench::discards_records(*e))
    throw error(errc::usage, o.index + " stores nothing (the harness's own baseline, for `pmindex bench`): nothing to load");
  if (auto e = find_index(o.index); e && !e->persistent() && !to_dram)
    throw error(errc::usage, o.index + " is a volatile index (dram mode only): it keeps no pool, so `load` would store "
                             "nothing in " + o.pool_path + " (--mode dram: load into DRAM and discard)");
  prepare_byte_run(o, d);
  load_records recs(d, seed);
  recs.limit_keys(o.index, o.params);
  auto idx = open(o);
  if (!idx->report().note.empty()) std::fprintf(stderr, "pmindex load: %s\n", idx->report().note.c_str());
  uint64_t done = 0;
  std::string got;
  for (uint64_t i = 0; i < n; ++i) {
    bool fresh;
    if (recs.bytes()) {
      std::string_view k = recs.key(i);
      fresh = idx->insert(k, recs.value(i)) || (idx->lookup(k, &got) && recs.value_ok(i, got));
    } else {
      uint64_t k = recs.key_u64(i), v = recs.value_u64(i);
      fresh = idx->insert(k, v) || idx->lookup(k) == v;
    }
    if (!fresh) throw error(errc::failure, recs.name(i) + " already present with another value");
    ++done;
    if (ack && done % ack == 0) {
      std::printf("acked %" PRIu64 "\n", done);
      std::fflush(stdout);
    }
  }
  if (ack && done % ack) {
    std::printf("acked %" PRIu64 "\n", done);
    std::fflush(stdout);
  }
  idx->close();
  std::fprintf(stderr, "loaded %" PRIu64 " keys into %s (%s)\n", done,
               to_dram ? "DRAM, dram mode: nothing kept" : o.pool_path.c_str(), o.index.c_str());
  return 0;
}

int cmd_verify(args& a) {
  options o = index_options(a, pm::open_mode::must_exist);
  bool index_given = a.has("index");
  uint64_t n = a.u64("keys", 0, 0, uint64_t{1} << 40);
  uint64_t seed = a.u64("seed", 1, 0, UINT64_MAX);
  load_records recs(read_data_options(a, seed), seed);
  a.finish();
  if (o.mode == pm::mode::dram)
    throw error(errc::usage, "verify reads a pool: --mode dram opens none (without --mode, a pool opens in its own mode)");
  if (auto e = index_given ? find_index(o.index) : nullptr; e && !e->persistent())
    throw error(errc::usage, o.index + " is a volatile index (dram mode only): it keeps no pool to verify");
  if (!index_given) {  // take the index the pool was made for
    pm::pool_options po;
    po.path = o.pool_path;
    po.open = pm::open_mode::must_exist;
    po.inspect = true;
    auto p = pm::pool::open(po);
    o.index = p->index_name();
    p->abandon();
  }
  recs.limit_keys(o.index, "");  // the limit's presence, not its value, decides the keys
  auto idx = open(o);
  auto& r = idx->report();
  std::fprintf(stderr, "opened %s (%s, %s mode): %s in %.3f s%s%s\n", o.pool_path.c_str(), o.index.c_str(),
               std::string(pm::to_string(r.mode)).c_str(), r.was_clean ? "clean" : "recovered",
               r.open_seconds + r.recover_seconds, r.note.empty() ? "" : "; ", r.note.c_str());
  auto c = idx->check();
  if (!c.ok) {
    // The pool is corrupt (damaged, or left so by a bug): exit code 11.
    std::printf("verify %s: check failed: %s\n", o.pool_path.c_str(), c.message.c_str());
    return static_cast<int>(errc::corrupt);
  }
  uint64_t missing = 0, wrong = 0;
  std::string got;
  for (uint64_t i = 0; i < n; ++i) {
    if (recs.bytes()) {
      if (!idx->lookup(recs.key(i), &got)) ++missing;
      else if (!recs.value_ok(i, got)) ++wrong;
    } else {
      auto v = idx->lookup(recs.key_u64(i));
      if (!v) ++missing;
      else if (*v != recs.value_u64(i)) ++wrong;
    }
  }
  std::printf("verify %s: %" PRIu64 " keys checked, %" PRIu64 " missing, %" PRIu64 " wrong\n", o.pool_path.c_str(),
              n, missing, wrong);
  idx->close();
  return missing || wrong ? static_cast<int>(errc::failure) : 0;
}

}  // namespace pmindex::cli

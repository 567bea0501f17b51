// pmindex serve: a durable memcached text-protocol server over any index
// (server/, docs/server.md).
#include <algorithm>
#include <chrono>
#include <cstdio>

#include "commands.hpp"
#include "pmindex/error.hpp"

#ifdef PMINDEX_HAVE_SERVER
#include "crash/crashtest.hpp"
#include "server.hpp"
#endif

namespace pmindex::cli {

#ifdef PMINDEX_HAVE_SERVER
int cmd_serve(args& a) {
  const bool has_index = a.has("index");
  options o = index_options(a, pm::open_mode::create_if_missing);
  server::config c;
  c.listen = a.str("listen", c.listen);
  c.threads = static_cast<unsigned>(a.u64("threads", c.threads, 1, 256));
  c.max_connections = static_cast<unsigned>(a.u64("max-connections", c.max_connections, 1, 1000000));
  c.idle_timeout = static_cast<unsigned>(a.u64("idle-timeout", c.idle_timeout, 0, 86400 * 365));
  c.sweep_interval = static_cast<unsigned>(a.u64("sweep-interval", c.sweep_interval, 1, 86400));
  c.ready_file = a.str("ready-file", "");
  // memcached's -I: the largest item, its 16-byte header included (memcached
  // counts its own item header too), so values of up to B - 16 bytes. The
  // default and the range follow memcached's (1m; 1k to 1g) within what the
  // index stores: default min(1m, max_value), range [min(1k, max_value),
  // max_value], checked below once the index is known.
  auto item_size_opt = a.opt_u64("max-item-size", server::k_item_header + 1, uint64_t{1} << 30);
  bool control_keys = a.flag("allow-control-keys");
  a.finish();  // first: --describe-options (the option table test) needs no --index
  if (!has_index) throw error(errc::usage, "serve needs --index NAME (see `pmindex list`)");
  auto e = find_index(o.index);
  if (!e) throw error(errc::usage, "unknown index '" + o.index + "' (see `pmindex list`)");
  if (!e->supports(key_kind::bytes))
    throw error(errc::usage, "pmindex serve needs an index with byte keys; " + o.index + " takes only u64 keys");
  if (e->key_limit)  // arraylist: its keys are slot numbers
    throw error(errc::usage, "pmindex serve needs an index that takes any byte key; " + o.index +
                                 " takes only keys below its capacity (`pmindex list --detail`)");
  o.params = crash::byte_run_params(*e, o.params, 0, "pmindex serve");
  server::check_listen(c.listen);  // a bad --listen is refused before the pool is created or opened
  const uint64_t max_item = std::min<uint64_t>(e->max_value, uint64_t{1} << 30);
  const uint64_t min_item = std::min<uint64_t>(1024, max_item);
  const uint64_t item_size = item_size_opt.value_or(std::min<uint64_t>(uint64_t{1} << 20, max_item));
  if (item_size > max_item)  // before the pool is created or opened
    throw error(errc::usage, "--max-item-size (-I) " + std::to_string(item_size) + " is over what " + o.index +
                                 " stores: items of up to " + std::to_string(max_item) + " bytes (values of up to " +
                                 std::to_string(max_item - server::k_item_header) + ")");
  if (item_size < min_item)
    throw error(errc::usage, "--max-item-size (-I) must be in [" + std::to_string(min_item) + ", " +
                                 std::to_string(max_item) + "] for " + o.index + ", got " + std::to_string(item_size));
  auto t0 = std::chrono::steady_clock::now();
  auto idx = open(o);
  server::store st(*idx, item_size - server::k_item_header);
  const auto& r = idx->report();
  server::server_info info;
  info.start_time = server::store::now();
  info.index_name = o.index;
  info.pool_path = o.pool_path;
  info.mode = std::string(pm::to_string(r.mode));
  info.open_seconds = r.open_seconds;
  info.recover_seconds = r.recover_seconds;
  info.was_clean = r.was_clean;
  info.created = r.created;
  info.control_keys = control_keys;
  info.ordered = e->ordered;
  // Records per index scan of `mr` and the key listings: a batch copies its
  // values out, so at most 16 MiB of them (at -I), between 16 and 4096.
  info.scan_batch = static_cast<size_t>(std::clamp<uint64_t>((uint64_t{16} << 20) / item_size, 16, 4096));
  info.startup_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  std::fprintf(stderr,
               "pmindex serve: %s pool %s (keys=%s, %s mode%s%s): %s; restart took %.3f s (open %.3f s, "
               "recovery %.3f s, "
               "%llu blocks traced)\n",
               o.index.c_str(), o.pool_path.c_str(), std::string(to_string(idx->keys())).c_str(),
               info.mode.c_str(), r.note.empty() ? "" : "; ", r.note.c_str(),
               r.created     ? "created"
               : r.was_clean ? "reopened after a clean shutdown"
                             : "recovered after a crash",
               r.open_seconds + r.recover_seconds, r.open_seconds, r.recover_seconds,
               static_cast<unsigned long long>(r.traced_blocks));
  int rc = server::run(st, c, info);
  idx->close();
  std::fprintf(stderr, "pmindex serve: index closed cleanly\n");
  return rc;
}
#else
int cmd_serve(args&) {
  throw error(errc::unsupported,
              "this pmindex was built without libevent (apt-get install libevent-dev): no serve");
}
#endif

}  // namespace pmindex::cli

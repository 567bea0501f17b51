// `pmindex serve`: the network side. One libevent loop accepts connections
// (loopback by default) and hands each to one of T worker threads, each
// running its own event loop; a worker reads a connection's bytes, lets its
// protocol session handle every complete command (pipelined commands are
// answered in order, in one write) and sends the replies. Index writes run
// on the worker thread and return only once durable (persist mode), so a
// reply is never sent before the change it reports is durable.
//
// Limits: at most `max_connections` open connections (one more is told
// "SERVER_ERROR too many open connections" and closed, as memcached does);
// a connection idle for `idle_timeout` seconds is closed (0 = never); a
// client that stops reading while sending commands is not read from again
// until its pending replies (over 4 MiB) drain. A sweeper thread runs
// delayed flush_all commands and removes expired items every
// `sweep_interval` seconds. SIGTERM or SIGINT: stop and close the index
// cleanly.
#pragma once

#include <cstdint>
#include <string>

#include "protocol.hpp"

namespace pmindex::server {

struct config {
  std::string listen = "127.0.0.1:11211";  // host:port, [v6]:port; port 0 = any free port
  unsigned threads = 4;
  unsigned max_connections = 1024;
  unsigned idle_timeout = 0;     // seconds; 0 = never
  unsigned sweep_interval = 60;  // seconds between expiry sweeps
  std::string ready_file;        // written with the bound port once listening
};

// Throws error(usage) for an address run() could not parse or resolve (a
// bad port, an unknown host), so that it is refused before the pool is
// opened.
void check_listen(const std::string& listen);

// Serves `st` until SIGTERM/SIGINT; returns the process exit code. Throws
// pmindex::error(usage) for an address it cannot parse, error(io) for one it
// cannot bind.
int run(store& st, const config& c, server_info info);

}  // namespace pmindex::server

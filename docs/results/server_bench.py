#!/usr/bin/env python3
"""The runs behind docs/results/server.md: `pmindex serve` over radix trees
(woart, wort, permart) and B-trees (fptree, lbtree) beside stock memcached,
on loopback, each run on a fresh server (new pool in /dev/shm, persist mode,
2 worker threads; memcached -t 2), targets interleaved within a repetition.

  mcload:   pmindex_mcload, mc-benchmark style: N SETs then N GETs of 20-byte
            keys "foo_rand" + 12 digits uniform over N keys, 32-byte values,
            4 and 50 connections, one request in flight each.
  memaslap: memcaslap (libmemcached-tools) for S seconds, 90/10 and 50/50
            get/set, 20-byte keys with 32-byte values, and 16-250-byte keys
            with 32 B-4 KiB values, 4 and 50 connections; p50/p99 are the
            upper bounds of memaslap's log2 latency buckets.

Usage: docs/results/server_bench.py BUILD_DIR OUT.json [--n N] [--reps R] [--seconds S] [--only mcload|memaslap]
Release build: cmake -S . -B build/release -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DPMINDEX_TESTS=OFF
               ninja -C build/release pmindex pmindex_mcload
"""
import argparse
import json
import os
import platform
import re
import signal
import subprocess
import sys
import time

POOL = "/dev/shm/server-bench.pool"
READY = "/tmp/server-bench.ready"
PORT = 21911


def start(build, target):
    for f in (POOL, READY):
        if os.path.exists(f):
            os.unlink(f)
    if target == "memcached":
        p = subprocess.Popen(["memcached", "-u", "root", "-l", "127.0.0.1", "-p", str(PORT), "-t", "2", "-m", "4096",
                              "-c", "1024", "-U", "0"])
        time.sleep(0.5)
        return p
    p = subprocess.Popen([f"{build}/pmindex", "serve", "--index", target, "--pool", POOL, "--pool-size", "4G",
                          "--listen", f"127.0.0.1:{PORT}", "--threads", "2", "--allow-control-keys",
                          "--ready-file", READY], stderr=subprocess.DEVNULL)
    while not os.path.exists(READY):
        assert p.poll() is None, "server failed to start"
        time.sleep(0.05)
    return p


def stop(p):
    p.send_signal(signal.SIGTERM)
    p.wait()
    if os.path.exists(POOL):
        os.unlink(POOL)


def mcload(build, target, conns, n, rep):
    r = subprocess.run([f"{build}/server/pmindex_mcload", "--port", str(PORT), "--conns", str(conns), "--requests",
                        str(n), "--keyspace", str(n), "--value-size", "32", "--phases", "set,get"],
                       capture_output=True, text=True, check=True)
    out = []
    for line in r.stdout.splitlines():
        j = json.loads(line)
        j.update(tool="mcload", target=target, rep=rep)
        del j["label"]
        out.append(j)
    return out


def memaslap(target, conns, mix, keys, seconds, rep):
    set_p = {"90/10": 0.1, "50/50": 0.5}[mix]
    kv = {"20B/32B": ("20 20 1", "32 32 1"), "16-250B/32B-4KiB": ("16 250 1", "32 4096 1")}[keys]
    cfg = "/tmp/server-bench-memaslap.cfg"
    with open(cfg, "w") as f:
        f.write(f"key\n{kv[0]}\nvalue\n{kv[1]}\ncmd\n0 {set_p}\n1 {1 - set_p:.2f}\n")
    r = subprocess.run(["memcaslap", "-s", f"127.0.0.1:{PORT}", "-T", "1", "-c", str(conns), "-t", f"{seconds}s",
                        "-S", f"{seconds}s", "-F", cfg], capture_output=True, text=True)
    text = r.stdout
    tps = float(re.search(r"Run time: [0-9.]+s Ops: \d+ TPS: (\d+)", text).group(1))
    # "Total Statistics (N events)" then "Log2 Dist:" rows "k: c_k c_k+1 c_k+2 c_k+3"
    total = text[text.rindex("Total Statistics ("):]
    counts = {}
    for row in re.finditer(r"^\s+(\d+):((?:\s+\d+)+)$", total.split("cmd_get")[0], re.M):
        for i, c in enumerate(row.group(2).split()):
            counts[int(row.group(1)) + i] = int(c)
    events = sum(counts.values())

    def pct(p):
        acc = 0
        for b in sorted(counts):
            acc += counts[b]
            if acc >= p * events:
                return 2 ** (b + 1)
        return None

    avg = float(re.search(r"Avg:\s+(\d+)", total).group(1))
    return [dict(tool="memaslap", target=target, conns=conns, mix=mix, keys_values=keys, seconds=seconds, rep=rep,
                 ops_per_sec=tps, avg_us=avg, p50_us_upper=pct(0.5), p99_us_upper=pct(0.99),
                 error_replies=(r.stdout + r.stderr).count("_ERROR"))]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("build")
    ap.add_argument("out")
    ap.add_argument("--n", type=int, default=500000)
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--seconds", type=int, default=5)
    ap.add_argument("--targets", default="woart,wort,permart,fptree,lbtree,memcached")
    ap.add_argument("--only", default="")
    a = ap.parse_args()
    targets = a.targets.split(",")
    runs = []
    for rep in range(1, a.reps + 1):
        for conns in (4, 50):
            if a.only in ("", "mcload"):
                for t in targets:
                    p = start(a.build, t)
                    try:
                        runs += mcload(a.build, t, conns, a.n, rep)
                    finally:
                        stop(p)
                    print(json.dumps(runs[-2:]), file=sys.stderr)
            if a.only in ("", "memaslap"):
                for mix in ("90/10", "50/50"):
                    for keys in ("20B/32B", "16-250B/32B-4KiB"):
                        for t in targets:
                            p = start(a.build, t)
                            try:
                                runs += memaslap(t, conns, mix, keys, a.seconds, rep)
                            finally:
                                stop(p)
                            print(json.dumps(runs[-1]), file=sys.stderr)
    commit = subprocess.run(["git", "rev-parse", "HEAD"], capture_output=True, text=True).stdout.strip()
    ctx = dict(date=time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), host=platform.node(),
               cores=os.cpu_count(), git_commit=commit, command=" ".join(sys.argv), n=a.n, reps=a.reps,
               memcached=subprocess.run(["memcached", "-V"], capture_output=True, text=True).stdout.strip(),
               server="pmindex serve --threads 2 --mode persist (pool in /dev/shm); memcached -t 2 -m 4096")
    with open(a.out, "w") as f:
        json.dump({"context": ctx, "runs": runs}, f, indent=1)


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""Medians of wort_scaling_bench.sh's runs: per index, workload, side (base = main, new = this
branch) and thread count, the median Mops/s, Mops per CPU-second and p99 over the repetitions;
the 2-thread / 1-thread ratio of the medians; new/base at 1 thread. Mops per thread CPU-second
(run.mops_cpu: the threads' preempted time not counted) is steadier on a shared machine, but
overstates a side whose threads sleep on a lock (base: the shared_mutex). Markdown on stdout.
usage: wort_scaling_summary.py DIR"""
import glob
import json
import os
import statistics
import sys
from collections import defaultdict

runs = defaultdict(list)  # (side, index, workload, threads) -> [run]
for f in sorted(glob.glob(os.path.join(sys.argv[1], "*.json"))):
    side = os.path.basename(f).split("-")[0]
    for r in json.load(open(f))["results"]:
        runs[(side, r["index"], r["workload"], r["threads"])].append(r["run"])


def med(side, i, w, t, key):
    rs = runs.get((side, i, w, t), [])
    if not rs:
        return float("nan"), 0
    get = {"mops": lambda r: r["mops"], "mops_cpu": lambda r: r["mops_cpu"],
           "p99": lambda r: r["latency_ns"]["p99"]}[key]
    return statistics.median(get(r) for r in rs), len(rs)


indexes = sorted({k[1] for k in runs}, key=["wort", "woart", "artcow"].index)
workloads = [w for w in ["ycsb-a", "ycsb-b", "update90insert10", "read100"] if any(k[2] == w for k in runs)]
print("| index | workload | base 1t | base 2t | base 2t/1t | new 1t | new 2t | new 2t/1t | new/base 1t |"
      " base / new 2t/1t in Mops per thread CPU-s | p99 ns base 1t/2t | p99 ns new 1t/2t | runs |")
print("|---|---|---|---|---|---|---|---|---|---|---|---|---|")
for i in indexes:
    for w in workloads:
        b1, n = med("base", i, w, 1, "mops")
        b2, _ = med("base", i, w, 2, "mops")
        n1, _ = med("new", i, w, 1, "mops")
        n2, _ = med("new", i, w, 2, "mops")
        c1, _ = med("new", i, w, 1, "mops_cpu")
        c2, _ = med("new", i, w, 2, "mops_cpu")
        d1, _ = med("base", i, w, 1, "mops_cpu")
        d2, _ = med("base", i, w, 2, "mops_cpu")
        pb1, _ = med("base", i, w, 1, "p99")
        pb2, _ = med("base", i, w, 2, "p99")
        pn1, _ = med("new", i, w, 1, "p99")
        pn2, _ = med("new", i, w, 2, "p99")
        print(f"| {i} | {w} | {b1:.2f} | {b2:.2f} | {b2 / b1:.2f} | {n1:.2f} | {n2:.2f} | **{n2 / n1:.2f}** |"
              f" {n1 / b1:.2f} | {d2 / d1:.2f} / {c2 / c1:.2f} | {pb1:.0f} / {pb2:.0f} | {pn1:.0f} / {pn2:.0f} | {n} |")

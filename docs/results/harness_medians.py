#!/usr/bin/env python3
"""Medians of the harness measurements (docs/results/harness.md).
usage: harness_medians.py [DIR]   (default: docs/results/harness)"""
import glob, json, os, statistics, sys

d = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "harness")
runs = {}
for f in sorted(glob.glob(os.path.join(d, "*_[0-9].json"))):
    for r in json.load(open(f))["results"]:
        key = (os.path.basename(f).rsplit("_", 1)[0], r["index"], r["workload"], r["threads"])
        runs.setdefault(key, []).append(r["run"])
print(f"{'set':8} {'index':11} {'workload':9} {'thr':>3} {'n':>2} {'Mops/s (wall)':>22} {'median':>7} "
      f"{'Mops/CPU-s':>22} {'median':>7} {'ns/op CPU':>9} {'p50 ns':>7}")
for (s, idx, wl, t), rs in runs.items():
    w = [r["mops"] for r in rs]
    c = [r["mops_cpu"] for r in rs]
    p50 = statistics.median(r["latency_ns"]["p50"] for r in rs)
    mc = statistics.median(c)
    print(f"{s:8} {idx:11} {wl:9} {t:3} {len(rs):2} {' '.join(f'{x:6.2f}' for x in w):>22} "
          f"{statistics.median(w):7.2f} {' '.join(f'{x:6.2f}' for x in c):>22} {mc:7.2f} "
          f"{1e3 * t / mc:9.1f} {p50:7.0f}")

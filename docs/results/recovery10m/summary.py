#!/usr/bin/env python3
"""Medians of docs/results/recovery10m/run.sh's repetitions: a markdown table.
   python3 docs/results/recovery10m/summary.py DIR"""
import glob, json, statistics as st, sys

d = sys.argv[1] if len(sys.argv) > 1 else "docs/results/recovery10m"
runs = {}
for f in sorted(glob.glob(f"{d}/r*.json")):
    for x in json.load(open(f))["results"]:
        if "recovery" in x:
            runs.setdefault(x["index"], []).append(x)
fp = st.median(x["space"]["dram_bytes"] for x in runs["fptree"]) if "fptree" in runs else None
print("| index | records | PM B/record | DRAM over fptree, B/record | clean reopen s (cpu-s) | after a crash s (cpu-s) | rebuild rate, M records per cpu-s (clean / crash) | reps |")
print("|---|---|---|---|---|---|---|---|")
for name, xs in runs.items():
    med = lambda f: st.median(x["recovery"][f] for x in xs)
    n = xs[0]["recovery"]["records_after_recovery"]
    pm = st.median(x["space"]["pm_bytes_per_record"] for x in xs)
    dram = st.median(x["space"]["dram_bytes"] for x in xs)
    over = f"{(dram - fp) / n:+.1f}" if fp is not None else "-"
    c, cc = med("clean_open_seconds"), med("clean_open_cpu_seconds")
    k, kc = med("dirty_open_seconds"), med("dirty_open_cpu_seconds")
    print(f"| {name} | {n/1e6:.0f}M | {pm:.1f} | {over} | {c:.3f} ({cc:.3f}) | {k:.3f} ({kc:.3f}) | "
          f"{n/cc/1e6:.1f} / {n/kc/1e6:.1f} | {len(xs)} |")

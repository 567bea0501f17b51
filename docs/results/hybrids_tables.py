#!/usr/bin/env python3
"""Markdown tables of roart_bench.sh runs: one table per (dataset, threads),
a row per workload, a column per index, the median wall Mops/s over the
repetitions (min-max below each table), and the space line per index.
   python3 docs/results/hybrids_tables.py DIR [index order...]"""
import collections, glob, json, statistics, sys

d = sys.argv[1]
order = sys.argv[2:]
cells = collections.defaultdict(list)
space = collections.defaultdict(list)
for f in sorted(glob.glob(d + "/*.json")):
    stem = f.split("/")[-1]
    ds = "ss-" + stem.split("-")[1] if stem.startswith("ss-") else stem.split("-")[0]
    for r in json.load(open(f))["results"]:
        cells[(ds, r.get("threads", 1), r["workload"], r["index"])].append(r["run"]["mops"])
        space[(ds, r["index"])].append(r["space"]["pm_bytes_per_record"])
groups = sorted({(k[0], k[1]) for k in cells})
for ds, t in groups:
    idx = [i for i in order if any(k[3] == i for k in cells)] or sorted({k[3] for k in cells})
    wls = []
    for k in cells:
        if k[0] == ds and k[1] == t and k[2] not in wls:
            wls.append(k[2])
    print(f"\n**{ds}, {t} thread{'s' if t > 1 else ''}** (Mops/s, median of the repetitions)\n")
    print("| workload | " + " | ".join(idx) + " |")
    print("|---|" + "---|" * len(idx))
    spread = []
    for w in wls:
        row = []
        for i in idx:
            v = cells.get((ds, t, w, i), [])
            row.append(f"{statistics.median(v):.3f}" if v else "-")
            if len(v) > 1:
                spread.append((max(v) - min(v)) / statistics.median(v))
        print(f"| {w} | " + " | ".join(row) + " |")
    if spread:
        print(f"\n(max-min of a cell over its median: median {statistics.median(spread):.0%}, largest {max(spread):.0%})")
for ds in sorted({k[0] for k in space}):
    print(f"\nPM bytes per record after the phases, {ds}: " +
          ", ".join(f"{i} {statistics.median(space[(ds, i)]):.1f}" for i in (order or sorted({k[1] for k in space}))
                    if (ds, i) in space))

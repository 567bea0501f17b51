#!/usr/bin/env python3
"""Medians of dptree_fp_bench.sh's runs: wall Mops/s (Mops per CPU-second) per workload, main's
dptree vs this branch's vs fptree, and the merge's flushed lines per merged record (after the prefill).
Usage: docs/results/dptree_fp_summary.py DIR"""
import json, statistics, sys, glob, os, collections

d = sys.argv[1]
cells = collections.defaultdict(list)  # (dataset, variant, workload) -> [(mops, mops_cpu)]
merge = collections.defaultdict(list)  # (dataset, variant) -> merge_flushes_per_record
for f in sorted(glob.glob(os.path.join(d, "*.json"))):
    ds, rest = os.path.basename(f).split("-", 1)
    variant = rest.rsplit("-", 1)[0]
    for r in json.load(open(f))["results"]:
        cells[(ds, variant, r["workload"])].append((r["run"]["mops"], r["run"]["mops_cpu"]))
        if r["workload"] == "read100" and "merge_flushes_per_record" in r["space"]:
            merge[(ds, variant)].append(r["space"]["merge_flushes_per_record"])
variants = ["dptree-main", "dptree-fp", "fptree"]
for ds in sorted({k[0] for k in cells}):
    wls = [w for w in ["read100", "ycsb-b", "scan=1:100", "ycsb-e", "insert=1"] if (ds, variants[1], w) in cells]
    print(f"\n{ds} (n={len(cells[(ds, variants[1], wls[0])])})")
    print("| workload | " + " | ".join(variants) + " | fp / main |")
    print("|---" * (len(variants) + 2) + "|")
    for w in wls:
        row, med = [], {}
        for v in variants:
            xs = cells.get((ds, v, w))
            if not xs:
                row.append("")
                continue
            med[v] = statistics.median(x[0] for x in xs)
            row.append(f"{med[v]:.3f} ({statistics.median(x[1] for x in xs):.3f})")
        ratio = f"{med['dptree-fp'] / med['dptree-main']:.2f}x" if "dptree-main" in med else ""
        print(f"| {w} | " + " | ".join(row) + f" | {ratio} |")
    for v in variants[:2]:
        if merge.get((ds, v)):
            print(f"merge flushes per merged record, {v}: {statistics.median(merge[(ds, v)]):.3f}")

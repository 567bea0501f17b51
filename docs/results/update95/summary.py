#!/usr/bin/env python3
"""Medians of docs/results/update95/run.sh's repetitions: whole-run Mops/s and
Mops per CPU-second per index and thread count, and the ratios to pmasstree.
   python3 docs/results/update95/summary.py DIR"""
import glob, json, statistics as st, sys

d = sys.argv[1] if len(sys.argv) > 1 else "docs/results/update95"
cells = {}
for f in sorted(glob.glob(f"{d}/t*-r*.json")):
    t = int(f.split("/")[-1][1:].split("-")[0])
    for x in json.load(open(f))["results"]:
        cells.setdefault((t, x["index"]), []).append(x)
print("| threads | index | Mops/s | Mops/cpu-s | / pmasstree (cpu-s) | flush/op | fence/op | reps |")
print("|---|---|---|---|---|---|---|---|")
for t in sorted({t for t, _ in cells}):
    base = st.median(x["run"]["mops_cpu"] for x in cells.get((t, "pmasstree"), [])) if (t, "pmasstree") in cells else None
    for (tt, name), xs in sorted(cells.items()):
        if tt != t:
            continue
        m = st.median(x["run"]["mops"] for x in xs)
        c = st.median(x["run"]["mops_cpu"] for x in xs)
        fl = st.median(x["run"]["flushes_per_op"] for x in xs)
        fe = st.median(x["run"]["fences_per_op"] for x in xs)
        ratio = f"{c / base:.2f}" if base else "-"
        print(f"| {t} | {name} | {m:.3f} | {c:.3f} | {ratio} | {fl:.2f} | {fe:.2f} | {len(xs)} |")

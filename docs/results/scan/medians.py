#!/usr/bin/env python3
"""Medians per (index, workload, binary) of docs/results/scan/ab.sh's rounds:
   wall Mops/s and Mops per CPU-second (the figure to compare on a loaded machine)."""
import glob, json, statistics as st, sys

res = {}
for f in sorted(glob.glob(f"{sys.argv[1]}/*-[0-9]*.json")):
    name = f.split("/")[-1].rsplit("-", 1)[0]
    for x in json.load(open(f))["results"]:
        res.setdefault((x["index"], x["workload"], name), []).append((x["run"]["mops"], x["run"]["mops_cpu"]))
for (i, w, b), v in sorted(res.items()):
    print(f"{i:10s} {w:14s} {b:8s} Mops {st.median(a for a, _ in v):.3f}  Mops/cpu-s {st.median(c for _, c in v):.3f}"
          f"  rounds {' '.join(f'{c:.3f}' for _, c in v)}")

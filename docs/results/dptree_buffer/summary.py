#!/usr/bin/env python3
"""Medians of docs/results/dptree_buffer/ab.sh: new/old per threads and workload.
   python3 docs/results/dptree_buffer/summary.py DIR"""
import collections, glob, json, statistics as st, sys

c = collections.defaultdict(list)
for f in glob.glob(sys.argv[1] + "/*.json"):
    b, t, _ = f.split("/")[-1][:-5].split("-")
    for x in json.load(open(f))["results"]:
        c[(t, x["workload"], "new" if b in ("new", "btb") else "old")].append(x["run"]["mops"])
print("| threads | workload | std::map | btree_map | ratio |")
print("|---|---|---|---|---|")
for t in ("t1", "t2"):
    for w in ["read100", "insert=1", "update=1", "read=0.5+update=0.5", "scan=1:100"]:
        o, n = st.median(c[(t, w, "old")]), st.median(c[(t, w, "new")])
        print(f"| {t[1:]} | {w} | {o:.3f} | {n:.3f} | {n / o:.2f} |")

#!/usr/bin/env python3
"""Medians of scaling.sh's runs: per index and workload, Mops/s at 1 and 2
   threads and 2t/1t (of the medians, and each round's own ratio).
   python3 docs/results/issue20/session55/scaling.py DIR"""
import collections, glob, json, statistics as st, sys

m = collections.defaultdict(dict)
for f in glob.glob(sys.argv[1] + "/*.json"):
    iw, t, r = f.split("/")[-1][:-5].rsplit("-", 2)
    i, w = iw.split("_", 1)
    m[(i, w)].setdefault(t, {})[r] = json.load(open(f))["results"][0]["run"]["mops"]
print("| index | workload | 1 thread | 2 threads | 2t/1t | per round |")
print("|---|---|---|---|---|---|")
for (i, w), d in sorted(m.items()):
    one, two = d.get("t1", {}), d.get("t2", {})
    rounds = sorted(set(one) & set(two), key=lambda r: int(r[1:]))
    a, b = st.median(one.values()), st.median(two.values())
    per = " ".join(f"{two[r] / one[r]:.2f}" for r in rounds)
    print(f"| {i} | {w} | {a:.3f} | {b:.3f} | {b / a:.2f} | {per} |")

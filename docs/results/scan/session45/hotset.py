#!/usr/bin/env python3
"""hotset.sh's table: per index the median scan100 (Mops/s and ns per scan)
   over the hot set and uniform, and what the misses add.
   python3 docs/results/scan/session45/hotset.py DIR"""
import collections, glob, json, statistics as st, sys

m, idx = collections.defaultdict(list), []
for f in sorted(glob.glob(sys.argv[1] + "/*.json")):
    i, d, _ = f.split("/")[-1][:-5].rsplit("-", 2)
    idx += [i] if i not in idx else []
    m[(i, d)] += [x["run"]["mops"] for x in json.load(open(f))["results"]]
print("| index | hot set Mops/s | uniform Mops/s | hot ns/scan | uniform ns/scan | uniform/hot time | runs |")
print("|---|---|---|---|---|---|---|")
for i in idx:
    h, u = st.median(m[(i, "hot")]), st.median(m[(i, "uniform")])
    print(f"| {i} | {h:.3f} | {u:.3f} | {1000 / h:.0f} | {1000 / u:.0f} | {h / u:.2f} | {len(m[(i, 'hot')])} |")

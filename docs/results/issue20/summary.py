#!/usr/bin/env python3
"""Issue 20's before/after table from docs/results/issue20/run.sh: per index,
   threads and workload the medians of old and new (Mops/s), new/old, and
   flushes/fences/allocations per op; then each side's 2-thread over 1-thread
   ratio for the scaling target (ycsb-a, ycsb-b, update90insert10).
   python3 docs/results/issue20/summary.py DIR"""
import collections, glob, json, statistics as st, sys

m, cost, idx, works = collections.defaultdict(list), collections.defaultdict(list), [], []
for f in sorted(glob.glob(sys.argv[1] + "/*.json")):
    side, rest = f.split("/")[-1][:-5].split("-", 1)
    i, t, _ = rest.rsplit("-", 2)
    for x in json.load(open(f))["results"]:
        w, r = x["workload"], x["run"]
        idx += [i] if i not in idx else []
        works += [w] if w not in works else []
        m[(i, t, w, side)].append(r["mops"])
        cost[(i, t, w, side)].append((r["flushes_per_op"], r["fences_per_op"], r["allocs_per_op"]))

def med(k):
    return st.median(m[k]) if m[k] else None

def per_op(k):
    return "/".join(f"{st.median(x[i] for x in cost[k]):.2f}" for i in range(3)) if cost[k] else "-"

f3 = lambda v: f"{v:.3f}" if v is not None else "-"
print("| index | threads | workload | old | new | new/old | flush/fence/alloc per op old | new | runs |")
print("|---|---|---|---|---|---|---|---|---|")
for i in idx:
    for t in ("t1", "t2"):
        for w in works:
            o, n = med((i, t, w, "old")), med((i, t, w, "new"))
            if o is None and n is None:
                continue
            ratio = f"{n / o:.2f}" if o and n else "-"
            print(f"| {i} | {t[1:]} | {w} | {f3(o)} | {f3(n)} | {ratio} | {per_op((i, t, w, 'old'))} | "
                  f"{per_op((i, t, w, 'new'))} | {len(m[(i, t, w, 'new')])} |")
print()
print("| index | workload | old 2t/1t | new 2t/1t |")
print("|---|---|---|---|")
for i in idx:
    for w in ("ycsb-a", "ycsb-b", "update90insert10"):
        r = []
        for s in ("old", "new"):
            a, b = med((i, "t1", w, s)), med((i, "t2", w, s))
            r.append(f"{b / a:.2f}" if a and b else "-")
        print(f"| {i} | {w} | {r[0]} | {r[1]} |")

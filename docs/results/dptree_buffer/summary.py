#!/usr/bin/env python3
"""Medians of docs/results/dptree_buffer/ab.sh: new/old per threads and workload,
   and each binary's 2-thread over 1-thread ratio.
   python3 docs/results/dptree_buffer/summary.py DIR [OLD-LABEL NEW-LABEL]"""
import collections, glob, json, statistics as st, sys

c = collections.defaultdict(list)
cost = collections.defaultdict(list)  # (threads, workload, side) -> (flushes, fences, allocs) per op
order = []
for f in sorted(glob.glob(sys.argv[1] + "/*.json")):
    b, t = f.split("/")[-1][:-5].split("-")[:2]
    for x in json.load(open(f))["results"]:
        side = "new" if b in ("new", "btb") else "old"
        c[(t, x["workload"], side)].append(x["run"]["mops"])
        r = x["run"]
        cost[(t, x["workload"], side)].append((r["flushes_per_op"], r["fences_per_op"], r["allocs_per_op"]))
        if x["workload"] not in order:
            order.append(x["workload"])
lo, ln = (sys.argv[2], sys.argv[3]) if len(sys.argv) > 3 else ("std::map", "btree_map")
threads = sorted({t for t, _, _ in c})
def per_op(t, w, b):  # medians of flushes / fences / allocations per op
    return "/".join(f"{st.median(x[i] for x in cost[(t, w, b)]):.2f}" for i in range(3))
print(f"| threads | workload | {lo} | {ln} | ratio | flush/fence/alloc per op {lo} | {ln} |")
print("|---|---|---|---|---|---|---|")
for t in threads:
    for w in order:
        o, n = st.median(c[(t, w, "old")]), st.median(c[(t, w, "new")])
        print(f"| {t[1:]} | {w} | {o:.3f} | {n:.3f} | {n / o:.2f} | {per_op(t, w, 'old')} | {per_op(t, w, 'new')} |")
if "t1" in threads and "t2" in threads:
    print()
    print(f"| workload | {lo} 2t/1t | {ln} 2t/1t |")
    print("|---|---|---|")
    for w in order:
        r = [st.median(c[("t2", w, b)]) / st.median(c[("t1", w, b)]) for b in ("old", "new")]
        print(f"| {w} | {r[0]:.2f} | {r[1]:.2f} |")

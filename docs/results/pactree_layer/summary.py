#!/usr/bin/env python3
"""Medians of docs/results/pactree_layer/ab.sh: new/old per dataset, threads and
workload, PM and DRAM bytes per record, and the reopen at 10M.
   python3 docs/results/pactree_layer/summary.py DIR"""
import collections, glob, json, statistics as st, sys

d = sys.argv[1]
c, space = collections.defaultdict(list), collections.defaultdict(list)
for f in glob.glob(d + "/*-r[0-9].json"):
    name = f.split("/")[-1][:-5]
    if name.startswith("recover-"):
        continue
    b, ds, t, _ = name.split("-")
    for x in json.load(open(f))["results"]:
        c[(ds, t, x["workload"], b)].append(x["run"]["mops"])
        if x["workload"] == "read100" and t == "t1":
            s = x["space"]
            space[(ds, b)].append((s["pm_bytes_used"] / s["records"], s["dram_bytes"] / s["records"]))
print("| keys | threads | workload | DRAM layer (old) Mops/s | persistent layer (new) | new/old |")
print("|---|---|---|---|---|---|")
for ds in ("u64", "urls"):
    for t in ("t1", "t2"):
        for w in ["read100", "insert=1", "update=1", "read=0.5+update=0.5", "scan=1:100"]:
            o, n = c[(ds, t, w, "old")], c[(ds, t, w, "new")]
            if o and n:
                o, n = st.median(o), st.median(n)
                print(f"| {ds} | {t[1:]} | {w} | {o:.3f} | {n:.3f} | {n / o:.2f} |")
print()
print("| keys | layer | PM B/record | DRAM B/record (process, allocator included) |")
print("|---|---|---|---|")
for (ds, b), v in sorted(space.items()):
    print(f"| {ds} | {b} | {st.median(x[0] for x in v):.1f} | {st.median(x[1] for x in v):.1f} |")
r = collections.defaultdict(list)
for f in glob.glob(d + "/recover-*.json"):
    b = f.split("/")[-1].split("-")[1]
    x = json.load(open(f))["results"][0]["recovery"]
    r[b].append(x)
if r:
    print()
    print("| 10M u64 | clean reopen s (cpu) | reopen after a crash s (cpu) | traced blocks |")
    print("|---|---|---|---|")
    for b in ("old", "new"):
        v = r[b]
        if v:
            m = lambda k: st.median(x[k] for x in v)
            print(f"| {b} | {m('clean_open_seconds'):.4f} ({m('clean_open_cpu_seconds'):.4f}) | "
                  f"{m('dirty_open_seconds'):.4f} ({m('dirty_open_cpu_seconds'):.4f}) | {m('traced_blocks'):.0f} |")

#!/usr/bin/env python3
"""Medians over the repetitions of docs/results/btree_bench.sh.
Usage: btree_aggregate.py OUT_DIR docs/results/btree.json > tables.md"""
import glob, json, os, statistics, sys
from collections import defaultdict

src, dst = sys.argv[1], sys.argv[2]
runs = defaultdict(list)  # (index, workload, dist, threads) -> [result]
context = None
short = {"read=1": "lookup", "update=1": "update", "scan=1": "scan", "insert=1": "insert",
         "read=0.9+insert=0.1": "r90i10", "read=0.5+insert=0.5": "r50i50", "read=0.1+insert=0.9": "r10i90"}
for f in sorted(glob.glob(os.path.join(src, "*.json"))):
    dist, t, rep = os.path.basename(f)[:-5].split("-")
    d = json.load(open(f))
    context = context or d["context"]
    for r in d["results"]:
        runs[(r["index"], short.get(r["workload"], r["workload"]), dist, int(t[1:]))].append(r)

def med(xs):
    xs = [x for x in xs if x is not None]
    return statistics.median(xs) if xs else None

rows = []
for (idx, wl, dist, t), rs in sorted(runs.items()):
    row = {"index": idx, "workload": wl, "distribution": dist, "threads": t, "reps": len(rs),
           "mops": med([r["run"]["mops"] for r in rs]),
           "flushes_per_op": med([r["run"]["flushes_per_op"] for r in rs]),
           "fences_per_op": med([r["run"]["fences_per_op"] for r in rs]),
           "load_seconds": med([r["load"]["seconds"] for r in rs]),
           "load_flushes_per_insert": med([r["load"]["flushes_per_insert"] for r in rs]),
           "load_fences_per_insert": med([r["load"]["fences_per_insert"] for r in rs]),
           "records_prefilled": rs[0]["load"]["records"],
           "pm_bytes_used": med([r["space"]["pm_bytes_used"] for r in rs]),
           "dram_bytes": med([r["space"]["dram_bytes"] for r in rs]),
           "inner_dram_bytes": med([r["space"].get("inner_dram_bytes") for r in rs]),
           "all_checks_ok": all(r["check"]["ok"] for r in rs)}
    rec = [r["recovery"] for r in rs if "recovery" in r]
    if rec:
        row["clean_open_seconds"] = med([x["clean_open_seconds"] for x in rec])
        row["dirty_recover_seconds"] = med([x["dirty_recover_seconds"] for x in rec])
    rows.append(row)
json.dump({"context": context, "results": rows}, open(dst, "w"), indent=1)

idxs = sorted({r["index"] for r in rows})
get = {(r["index"], r["workload"], r["distribution"], r["threads"]): r for r in rows}
wls = ["lookup", "insert", "update", "scan", "r90i10", "r50i50", "r10i90"]
for dist in ["uniform", "selfsimilar"]:
    print(f"\n### Throughput, Mops/s (median of 3), {dist}\n")
    print("| workload | " + " | ".join(f"{i} t1 | {i} t2" for i in idxs) + " |")
    print("|---|" + "---:|" * (2 * len(idxs)))
    for w in wls:
        cells = []
        for i in idxs:
            for t in (1, 2):
                r = get.get((i, w, dist, t))
                cells.append(f"{r['mops']:.3f}" if r else "-")
        print(f"| {w} | " + " | ".join(cells) + " |")
print("\n### Persistence cost and space (uniform, 1 thread)\n")
print("| index | flush/insert (run) | fence/insert (run) | flush/insert (prefill) | flush/update | PM MiB | DRAM MiB (all) | inner-node DRAM MiB | clean open s | recovery s |")
print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
for i in idxs:
    ins, upd, lk = get.get((i, "insert", "uniform", 1)), get.get((i, "update", "uniform", 1)), get.get((i, "lookup", "uniform", 1))
    rc = ins  # --recover ran after the last phase (insert)
    f = lambda x, k, fmt="{:.2f}": fmt.format(x[k]) if x and x.get(k) is not None else "-"
    mib = lambda x, k: f"{x[k] / 2**20:.1f}" if x and x.get(k) is not None else "-"
    print(f"| {i} | {f(ins,'flushes_per_op')} | {f(ins,'fences_per_op')} | {f(lk,'load_flushes_per_insert')} | {f(upd,'flushes_per_op')} | "
          f"{mib(lk,'pm_bytes_used')} | {mib(lk,'dram_bytes')} | {mib(lk,'inner_dram_bytes')} | {f(rc,'clean_open_seconds','{:.3f}')} | {f(rc,'dirty_recover_seconds','{:.3f}')} |")

#!/usr/bin/env python3
"""Medians of measure.sh runs. Usage: summarize.py OUTDIR docs/results/permart.json"""
import glob, json, os, re, statistics, sys
from collections import defaultdict

src, dst = sys.argv[1], sys.argv[2]
runs = defaultdict(list)
context = None
for f in sorted(glob.glob(os.path.join(src, "*.json"))):
    name = re.sub(r"-r\d+$", "", os.path.basename(f)[:-5])
    d = json.load(open(f))
    context = context or d["context"]
    for r in d["results"]:
        runs[(name, r["index"])].append(r)
med = lambda xs: statistics.median(xs) if xs else None
rows = []
for (name, idx), rs in sorted(runs.items()):
    row = {"run": name, "index": idx, "reps": len(rs), "mode": rs[0]["mode"],
           "mops": med([r["run"]["mops"] for r in rs]),
           "p50_ns": med([r["run"]["latency_ns"]["p50"] for r in rs]),
           "flushes_per_op": med([r["run"]["flushes_per_op"] for r in rs]),
           "fences_per_op": med([r["run"]["fences_per_op"] for r in rs]),
           "allocs_per_op": med([r["run"]["allocs_per_op"] for r in rs]),
           "records": rs[0]["space"].get("records"),
           "pm_bytes_per_record": med([r["space"]["pm_bytes_used"] / r["space"]["records"] for r in rs]),
           "checks_ok": all(r["check"]["ok"] for r in rs)}
    rec = [r["recovery"] for r in rs if "recovery" in r]
    if rec:
        row["clean_open_s"] = med([x["clean_open_seconds"] for x in rec])
        row["recovery_s"] = med([x["dirty_open_seconds"] for x in rec])
        row["traced_blocks"] = med([x["traced_blocks"] for x in rec])
    rows.append(row)
json.dump({"context": context, "results": rows}, open(dst, "w"), indent=1)
print("| run | index | Mops/s | p50 ns | flush/op | fence/op | alloc/op | PM B/record | clean open s | recovery s | traced blocks |")
print("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
f = lambda x, p="{:.2f}": p.format(x) if x is not None else "-"
for r in rows:
    print(f"| {r['run']} | {r['index']} | {f(r['mops'])} | {f(r['p50_ns'], '{:.0f}')} | {f(r['flushes_per_op'])} | "
          f"{f(r['fences_per_op'])} | {f(r['allocs_per_op'])} | {f(r['pm_bytes_per_record'], '{:.1f}')} | "
          f"{f(r.get('clean_open_s'), '{:.3f}')} | {f(r.get('recovery_s'), '{:.2f}')} | {f(r.get('traced_blocks'), '{:.0f}')} |")

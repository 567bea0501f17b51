#!/usr/bin/env python3
"""Medians of compare_artifact.sh runs, pmindex beside the artifact.
Usage: compare_summary.py OUTDIR vs_artifact.json  (prints a markdown table)"""
import glob, json, os, re, statistics, sys
from collections import defaultdict

src, dst = sys.argv[1], sys.argv[2]
ours, theirs = defaultdict(list), defaultdict(list)
for f in glob.glob(os.path.join(src, "pmindex-*.json")):
    c, v = re.match(r"pmindex-(.+)-(permart|2log)-r\d+\.json", os.path.basename(f)).groups()
    r = json.load(open(f))["results"][0]
    ops = r["ops"]
    upd = [ops[k] for k in ("insert", "remove") if k in ops]
    n_upd = sum(o["ops"] for o in upd)
    ours[(c, v)].append({
        "total_mops": r["run"]["mops"],
        "update_mops": sum(o["mops"] for o in upd),
        "rq_per_s": ops["scan"]["mops"] * 1e6 if "scan" in ops else None,
        "flushes_per_update": sum(o["flushes_per_op"] * o["ops"] for o in upd) / n_upd if n_upd else None,
        "fences_per_update": sum(o["fences_per_op"] * o["ops"] for o in upd) / n_upd if n_upd else None,
        "allocs_per_update": sum(o["allocs_per_op"] * o["ops"] for o in upd) / n_upd if n_upd else None,
        "check_ok": r["check"]["ok"]})
for f in glob.glob(os.path.join(src, "artifact-*.txt")):
    c, v = re.match(r"artifact-(.+)-(permart|2log)-r\d+\.txt", os.path.basename(f)).groups()
    kv = dict(re.findall(r"^(\w+)=(\S+)$", open(f).read(), re.M))
    if "total_throughput" not in kv:
        continue
    theirs[(c, v)].append({
        "total_mops": float(kv["total_throughput"]) / 1e6,
        "update_mops": float(kv.get("update_throughput", 0)) / 1e6,
        "rq_per_s": float(kv["rq_throughput_float"]) if float(kv.get("rq_throughput_float", 0)) > 0 else None})

def med(rs, k):
    xs = [r[k] for r in rs if r.get(k) is not None]
    return statistics.median(xs) if xs else None

order = ["a", "b", "c", "d", "e-dense", "e-sparse", "e-dense-0.1", "e-sparse-0.1", "e-dense-1", "e-sparse-1", "f"]
rows = []
for (c, v) in sorted(set(ours) | set(theirs), key=lambda x: (order.index(x[0]) if x[0] in order else 99, x[1])):
    o, t = ours.get((c, v), []), theirs.get((c, v), [])
    row = {"config": c, "variant": v, "reps_pmindex": len(o), "reps_artifact": len(t)}
    for k in ("total_mops", "update_mops", "rq_per_s"):
        row["pmindex_" + k], row["artifact_" + k] = med(o, k), med(t, k)
    for k in ("flushes_per_update", "fences_per_update", "allocs_per_update"):
        row[k] = med(o, k)
    row["checks_ok"] = all(r["check_ok"] for r in o)
    rows.append(row)
json.dump({"runs": rows}, open(dst, "w"), indent=1)

fmt = lambda x, f="{:.2f}": f.format(x) if x is not None else "-"
ratio = lambda a, b: f"{a / b:.2f}x" if a and b else "-"
print("| config | variant | pmindex Mops/s | artifact Mops/s | ratio | pmindex upd Mops/s | artifact upd Mops/s | pmindex rq/s | artifact rq/s | rq ratio | flush/upd | fence/upd | alloc/upd |")
print("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
for r in rows:
    print(f"| {r['config']} | {r['variant']} | {fmt(r['pmindex_total_mops'])} | {fmt(r['artifact_total_mops'])} | "
          f"{ratio(r['pmindex_total_mops'], r['artifact_total_mops'])} | {fmt(r['pmindex_update_mops'])} | "
          f"{fmt(r['artifact_update_mops'])} | {fmt(r['pmindex_rq_per_s'], '{:.0f}')} | {fmt(r['artifact_rq_per_s'], '{:.0f}')} | "
          f"{ratio(r['pmindex_rq_per_s'], r['artifact_rq_per_s'])} | {fmt(r['flushes_per_update'])} | {fmt(r['fences_per_update'])} | {fmt(r['allocs_per_update'])} |")
# 2-Log: an update that appends to a log allocates nothing; one that copies
# the leaf allocates. The share of copy-on-writes the logs saved, per config:
by = {(r["config"], r["variant"]): r for r in rows}
print("\n| config | allocations per update, permart | permart-2log | copy-on-writes saved |")
print("|---|---:|---:|---:|")
for c in order:
    a, b = by.get((c, "permart")), by.get((c, "2log"))
    if a and b and a["allocs_per_update"] and b["allocs_per_update"] is not None:
        print(f"| {c} | {a['allocs_per_update']:.3f} | {b['allocs_per_update']:.3f} | {max(0.0, 100 * (1 - b['allocs_per_update'] / a['allocs_per_update'])):.0f}% |")
